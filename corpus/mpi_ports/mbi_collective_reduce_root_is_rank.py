"""Each rank reduces its local sum to itself: `dst=rank`, so no two ranks agree on the root.

Origin: MPI Bugs Initiative, codes/MayBeRemoved/collective-reduce-root-mismatch.c in mquinson/MBI
URL: https://github.com/mquinson/MBI/blob/1bf81e65704ce6ff01177bd2af042cdcfd30b1be/codes/MayBeRemoved/collective-reduce-root-mismatch.c
MPI original: `localsum = 0 + 1 + ... + rank; MPI_Reduce(&localsum, &sum, 1, MPI_INT, MPI_SUM,
rank, MPI_COMM_WORLD); if (rank == 0) printf(total)` -- the root argument is the caller's rank.
Port: the same local sum and `dist.reduce(localsum, dst=rank)`.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    localsum = torch.tensor([float(sum(range(rank + 1)))])
    print(f"process {rank} has local sum of {localsum.item():.0f}")
    dist.reduce(localsum, dst=rank)  # expect: RC104
    if rank == 0:
        print(f"total sum is {localsum.item():.0f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
