"""After a common broadcast, even ranks reduce while odd ranks broadcast, and in the next step the
roles swap: each if/else pairs a reduce with a broadcast.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/src/CIVL_BcastReduce_bad.c
(from the CIVL examples; also parcoach/microbenchmarks CIVL_BcastReduce_bad.c)
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/src/CIVL_BcastReduce_bad.c
MPI original: rank 0 sets `num = 3`; MPI_Bcast; `if (rank % 2 == 0) MPI_Reduce else MPI_Bcast`;
rank 0 copies the result; `if (rank % 2 == 0) MPI_Bcast else MPI_Reduce`; assert num == 3*nprocs.
Even ranks issue {Bcast, Reduce, Bcast}, odd ranks {Bcast, Bcast, Reduce}.
Port: the same three steps on a one-element tensor; both rank-parity if/else statements pair
different collectives, so both carry a marker.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    nprocs = dist.get_world_size()
    num = torch.zeros(1)
    recv = torch.zeros(1)
    if rank == 0:
        num.fill_(3)
    dist.broadcast(num, src=0)
    if rank % 2 == 0:  # expect: RC106
        recv.copy_(num)
        dist.reduce(recv, dst=0)
    else:
        dist.broadcast(num, src=0)
    if rank == 0:
        num.copy_(recv)
    if rank % 2 == 0:  # expect: RC106
        dist.broadcast(num, src=0)
    else:
        recv.copy_(num)
        dist.reduce(recv, dst=0)
    assert num.item() == 3 * nprocs, f"rank {rank}: {num.item()}"
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
