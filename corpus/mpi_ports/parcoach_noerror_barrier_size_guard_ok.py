"""Correct: a barrier guarded by the world size, which every rank answers alike.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/noerror_barrier.c (also
parcoach/microbenchmarks noerror_barrier.c, "Correct usage of barrier")
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/noerror_barrier.c
MPI original: `MPI_Comm_size(WORLD, &size); if (size < 256) MPI_Barrier(WORLD);`
Port: `if world_size < 256: dist.barrier()` -- the guard is on a value that is the same on every
rank, so either every rank barriers or none does.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    size = dist.get_world_size()
    state = torch.zeros(4)
    if size < 256:
        dist.barrier()
    print(f"rank {dist.get_rank()} of {size}: {state.sum().item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
