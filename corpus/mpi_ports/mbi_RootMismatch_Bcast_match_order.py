"""Two broadcasts, one rooted at each rank; rank 0 issues root 0's first, rank 1 root 1's first.

Origin: MPI Bugs Initiative, codes/MayBeRemoved/RootMismatch_Bcast.c in mquinson/MBI
URL: https://github.com/mquinson/MBI/blob/1bf81e65704ce6ff01177bd2af042cdcfd30b1be/codes/MayBeRemoved/RootMismatch_Bcast.c
MPI original: `switch (rank) { case 0: MPI_Bcast(&buf1, ..., 0, WORLD); MPI_Bcast(&buf2, ..., 1,
WORLD); break; case 1: MPI_Bcast(&buf2, ..., 1, WORLD); MPI_Bcast(&buf1, ..., 0, WORLD); }`
(exactly 2 processes).
Port: the `switch` is a `match rank:`; both arms issue two broadcasts, with the roots in
opposite orders, so the first pair has two roots and no receiver.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    if dist.get_world_size() != 2:
        print("This test requires exactly 2 processes")
        dist.destroy_process_group()
        return
    buf1 = torch.tensor([float(rank)])
    buf2 = torch.tensor([float(rank)])
    match rank:
        case 0:  # expect: RC106
            dist.broadcast(buf1, src=0)
            dist.broadcast(buf2, src=1)
        case 1:
            dist.broadcast(buf2, src=1)
            dist.broadcast(buf1, src=0)
    print(f"process {rank}: buf1={buf1.item()}, buf2={buf2.item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
