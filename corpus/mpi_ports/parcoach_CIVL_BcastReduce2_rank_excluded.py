"""Between two all-reduces every rank but one reduces to rank 0: the excluded rank's next
all-reduce meets the others' reduce.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/CIVL_BcastReduce2.c
(from the CIVL examples; the MBI copy is codes/MayBeRemoved/OrderErr_Reduce-Allreduce.c in
mquinson/MBI)
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/CIVL_BcastReduce2.c
MPI original: MPI_Bcast of `num`, MPI_Allreduce, `if (rank != 5) MPI_Reduce(...)`, MPI_Allreduce,
assert. "This example has an error when there are more than five MPI processes."
Port: the excluded rank is a constant, `EXCLUDED_RANK = 3`, so the bug shows on a 4-rank run
(run this file with 4 ranks; on 2 or 3 ranks every rank takes the reduce and it completes).
"""
import torch
import torch.distributed as dist

EXCLUDED_RANK = 3


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    nprocs = dist.get_world_size()
    num = torch.zeros(1)
    recv = torch.zeros(1)
    if rank == 0:
        num.fill_(3)
    dist.broadcast(num, src=0)
    recv.copy_(num)
    dist.all_reduce(recv)
    if rank != EXCLUDED_RANK:
        num.copy_(recv)
        dist.reduce(num, dst=0)  # expect: RC101
    recv.copy_(num)
    dist.all_reduce(recv)
    print(f"rank {rank} of {nprocs}: {recv.item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
