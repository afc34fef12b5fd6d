"""Odd ranks all-reduce and then broadcast; even ranks call the same two collectives in the
other order.

Origin: MPI Bugs Initiative, generator scripts/generators/CollMatchingGenerator.py in
mquinson/MBI (the MBI home is gitlab.com/MpiCorrectness/MpiBugsInitiative), generated code
CallOrdering_MPI_Allreduce_MPI_Bcast_nok.c
URL: https://github.com/mquinson/MBI/blob/1bf81e65704ce6ff01177bd2af042cdcfd30b1be/scripts/generators/CollMatchingGenerator.py
MPI original: `if (rank % 2) { MPI_Allreduce(...); MPI_Bcast(...); } else { MPI_Bcast(...);
MPI_Allreduce(...); }` -- "Odd ranks call c1 and then c2 while even ranks call these collectives
in the other order" (ERROR: CallMatching).
Port: a loss all-reduce and a learning-rate broadcast from rank 0, in swapped orders in the two
arms of the same `rank % 2` test.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    loss = torch.tensor([0.5 + rank])
    lr = torch.tensor([0.1 if rank == 0 else 0.0])
    if rank % 2:  # expect: RC106
        dist.all_reduce(loss)
        dist.broadcast(lr, src=0)
    else:
        dist.broadcast(lr, src=0)
        dist.all_reduce(loss)
    print(f"rank {rank} loss {loss.item()} lr {lr.item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
