"""Correct: every rank all-reduces and then broadcasts; the guard MBI wraps them in is true on
every rank.

Origin: MPI Bugs Initiative, generator scripts/generators/CollMatchingGenerator.py in
mquinson/MBI, generated code CallOrdering_MPI_Allreduce_MPI_Bcast_ok.c
URL: https://github.com/mquinson/MBI/blob/1bf81e65704ce6ff01177bd2af042cdcfd30b1be/scripts/generators/CollMatchingGenerator.py
MPI original: `if (rank < nprocs) { MPI_Allreduce(...); MPI_Bcast(...); } else { }` -- "All ranks
call c1 and then c2" (the `_ok` variant replaces the `rank % 2` condition by `rank < nprocs`).
Port: `if rank < world_size:` around the all-reduce and the broadcast; an analysis has to see
that the condition holds on every rank.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    nprocs = dist.get_world_size()
    loss = torch.tensor([0.5 + rank])
    lr = torch.tensor([0.1 if rank == 0 else 0.0])
    if rank < nprocs:
        dist.all_reduce(loss)
        dist.broadcast(lr, src=0)
    print(f"rank {rank} loss {loss.item()} lr {lr.item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
