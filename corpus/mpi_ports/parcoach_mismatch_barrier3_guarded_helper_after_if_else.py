"""A balanced if/else (helper barrier on odd ranks, inline barrier on even ranks) followed by a
second, unbalanced call of the helper on the odd ranks only.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/mismatch_barrier3.c
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/mismatch_barrier3.c
MPI original: `void f() { MPI_Barrier(MPI_COMM_WORLD); }`; main does `if (r % 2) f(); else
MPI_Barrier(...)` (every rank one barrier) and then `if (r % 2) f();` (odd ranks a second one).
Port: `wait_for_peers()` wraps `dist.barrier()`; the first if/else is the safe "everyone syncs"
step, the second `if rank % 2:` re-syncs only the odd ranks.
"""
import torch
import torch.distributed as dist


def wait_for_peers() -> None:
    dist.barrier()


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    stats = torch.zeros(3)
    if rank % 2:
        wait_for_peers()
    else:
        dist.barrier()
    stats += rank
    if rank % 2:
        wait_for_peers()  # expect: RC101
    print(f"rank {rank} stats {stats.tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
