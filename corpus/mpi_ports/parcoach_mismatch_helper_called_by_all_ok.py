"""Correct: a helper that reduces in both arms of its own rank test and then barriers, called by
every rank.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/mismatch.c (function `g`, the
part of the benchmark that is correct; the buggy port is parcoach_mismatch_helper_order.py)
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/mismatch.c
MPI original: `void g(int rank, int size) { if (rank % 2) MPI_Reduce(...); else MPI_Reduce(...);
MPI_Barrier(WORLD); }`; in this variant main calls `g(rank, size)` on every rank.
Port: `reduce_then_sync` as in the buggy port; main calls it unconditionally.
"""
import torch
import torch.distributed as dist


def reduce_then_sync(rank: int, size: int, value: torch.Tensor) -> None:
    if rank % 2:
        dist.reduce(value, dst=0)
    else:
        dist.reduce(value, dst=0)
    dist.barrier()


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    size = dist.get_world_size()
    value = torch.tensor([12.0])
    reduce_then_sync(rank, size, value)
    print(f"rank {rank} value {value.item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
