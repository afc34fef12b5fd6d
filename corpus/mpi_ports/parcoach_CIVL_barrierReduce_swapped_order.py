"""Odd ranks enter a barrier and then reduce their local sums; even ranks reduce first and then
enter the barrier: the same two collectives in opposite orders.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/CIVL_barrierReduce.c
(from the CIVL examples; also parcoach/microbenchmarks CIVL_barrierReduce.c)
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/CIVL_barrierReduce.c
MPI original: `localsum = 0 + 1 + ... + rank`; `if (rank % 2) { MPI_Barrier; MPI_Reduce(... 0) }
else { MPI_Reduce(... 0); MPI_Barrier }`; rank 0 prints the total.
Port: the same local sum as a tensor and `dist.reduce(..., dst=0)`; the two arms keep the
original's swapped order.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    localsum = torch.tensor([float(sum(range(rank + 1)))])
    print(f"process {rank} has local sum of {localsum.item():.0f}")
    if rank % 2:  # expect: RC106
        print(f"process {rank} enters barrier")
        dist.barrier()
        print(f"process {rank} exits barrier")
        dist.reduce(localsum, dst=0)
    else:
        dist.reduce(localsum, dst=0)
        print(f"process {rank} enters barrier")
        dist.barrier()
        print(f"process {rank} exits barrier")
    if rank == 0:
        print(f"total sum is {localsum.item():.0f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
