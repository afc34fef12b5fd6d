"""Every rank all-gathers its predictions, but each contributes a tensor whose length depends on
its rank.

Origin: MPI Bugs Initiative, codes/MayBeRemoved/coll-allgather-type-len-error.c in mquinson/MBI
URL: https://github.com/mquinson/MBI/blob/1bf81e65704ce6ff01177bd2af042cdcfd30b1be/codes/MayBeRemoved/coll-allgather-type-len-error.c
MPI original: `MPI_Type_contiguous(3 - rank, MPI_INT, &conti); MPI_Allgather(outbuf, 6 / (3 -
rank), conti, inbuf, 6 + rank % 2, MPI_INT, MPI_COMM_WORLD);` -- the send and receive counts
disagree on odd ranks (needs 3 processes).
Port: the send tensor has `6 + rank % 2` elements and every rank sizes its receive list from
its own length, so the odd rank expects (and sends) 7 where the others send 6.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world = dist.get_world_size()
    preds = torch.arange(6 + rank % 2, dtype=torch.float32) + rank * 6
    gathered = [torch.zeros_like(preds) for _ in range(world)]
    dist.all_gather(gathered, preds)  # expect: RC104
    print(f"rank {rank} gathered {sum(g.numel() for g in gathered)} predictions")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
