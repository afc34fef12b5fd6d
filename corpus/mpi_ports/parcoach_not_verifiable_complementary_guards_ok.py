"""Correct though structured unusually: odd ranks barrier under one guard, even ranks under its
complement in a second statement, so every rank issues exactly one barrier.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/not_verifiable.c (also
parcoach/microbenchmarks not_verifiable.c: "Correct, but structurally incorrect code")
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/not_verifiable.c
MPI original: `if (rank % 2) MPI_Barrier(WORLD); if (!rank % 2) MPI_Barrier(WORLD);` -- meant as
complementary guards. (In C, `!rank % 2` parses as `(!rank) % 2`, true on rank 0 only, so the
C code is complementary only on 2 processes.)
Port: Python's `not rank % 2` parses as `not (rank % 2)`, the intended complement, so the port
is correct on any number of ranks.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if dist.get_world_size() < 2:
        dist.destroy_process_group()
        return
    if rank % 2:
        dist.barrier()
    if not rank % 2:
        dist.barrier()
    print(f"rank {rank} passed one barrier {torch.ones(1).item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
