"""Correct: broadcast, reduce and broadcast issued by every rank in the same order; only the data
preparation is rank 0's.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/CIVL_BcastReduce.c (from the
CIVL examples; the correct sibling of CIVL_BcastReduce_bad.c)
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/CIVL_BcastReduce.c
MPI original: `if (rank == 0) num = 3; MPI_Bcast; MPI_Reduce(... 0); if (rank == 0) num = recv;
MPI_Bcast; assert(num == 3 * nprocs);`
Port: the same steps on one-element tensors.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    nprocs = dist.get_world_size()
    num = torch.zeros(1)
    if rank == 0:
        num.fill_(3)
    dist.broadcast(num, src=0)
    recv = num.clone()
    dist.reduce(recv, dst=0)
    if rank == 0:
        num.copy_(recv)
    dist.broadcast(num, src=0)
    assert num.item() == 3 * nprocs
    print(f"rank {rank}: num {num.item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
