"""Rank 0 does a barrier and then a reduce; the other ranks call a helper that reduces (in both
arms of its own rank test) and then barriers.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/mismatch.c
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/mismatch.c
MPI original: `void g(int rank, int size) { if (rank % 2) MPI_Reduce; else MPI_Reduce;
MPI_Barrier; }`; main: `if (rank == 0) { MPI_Barrier; MPI_Reduce; } else { g(rank, size); }`.
Rank 0 issues {Barrier, Reduce}, the others {Reduce, Barrier}.
Port: `reduce_then_sync(rank, size, value)`; rank 0's arm inlines the two collectives in the other
order.
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
    if size < 2:
        dist.destroy_process_group()
        return
    value = torch.tensor([12.0])
    if rank == 0:  # expect: RC106
        dist.barrier()
        dist.reduce(value, dst=0)
    else:
        reduce_then_sync(rank, size, value)
    print(f"rank {rank} value {value.item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
