"""Non-blocking collectives in swapped orders: odd ranks start an all-reduce and then a broadcast,
even ranks the broadcast first, each waited on before the next is started.

Origin: MPI Bugs Initiative, generator scripts/generators/CollMatchingGenerator.py in
mquinson/MBI (c1/c2 drawn from the non-blocking list), generated code
CallOrdering_MPI_Iallreduce_MPI_Ibcast_nok.c
URL: https://github.com/mquinson/MBI/blob/1bf81e65704ce6ff01177bd2af042cdcfd30b1be/scripts/generators/CollMatchingGenerator.py
MPI original: `if (rank % 2) { MPI_Iallreduce(..., &req1); MPI_Wait(&req1); MPI_Ibcast(...,
&req2); MPI_Wait(&req2); } else { MPI_Ibcast; MPI_Wait; MPI_Iallreduce; MPI_Wait; }`
Port: `async_op=True` collectives and `work.wait()` in the same orders.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    sum1 = torch.ones(1)
    buf2 = torch.full((128,), float(rank))
    if rank % 2:  # expect: RC106
        req1 = dist.all_reduce(sum1, async_op=True)
        req1.wait()
        req2 = dist.broadcast(buf2, src=0, async_op=True)
        req2.wait()
    else:
        req2 = dist.broadcast(buf2, src=0, async_op=True)
        req2.wait()
        req1 = dist.all_reduce(sum1, async_op=True)
        req1.wait()
    print(f"rank {rank} sum {sum1.item()} buf {buf2[0].item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
