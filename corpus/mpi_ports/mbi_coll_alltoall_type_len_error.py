"""An all-to-all token exchange where each rank's per-peer chunk length depends on its rank.

Origin: MPI Bugs Initiative, codes/MayBeRemoved/coll-alltoall-type-len-error.c in mquinson/MBI
URL: https://github.com/mquinson/MBI/blob/1bf81e65704ce6ff01177bd2af042cdcfd30b1be/codes/MayBeRemoved/coll-alltoall-type-len-error.c
MPI original: `MPI_Type_contiguous(3 - rank, MPI_INT, &conti); MPI_Alltoall(outbuf, 6 / (3 -
rank), conti, inbuf, 6 + rank % 2, MPI_INT, MPI_COMM_WORLD);` -- send and receive counts that
differ by rank (needs 3 processes).
Port: `dist.all_to_all_single` (the all-to-all gloo implements) with a per-peer chunk of
`6 + rank % 2` elements on both sides, so the odd rank sends and expects 7 per peer where the
others use 6.
"""
import torch
import torch.distributed as dist


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world = dist.get_world_size()
    chunk = 6 + rank % 2
    tokens = torch.arange(world * chunk, dtype=torch.float32) + rank * 18
    routed = torch.zeros(world * chunk)
    dist.all_to_all_single(routed, tokens)  # expect: RC104
    print(f"rank {rank} received {routed.numel()} tokens")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
