"""Rank 0 gathers every rank's embeddings with all_gather_into_tensor for a retrieval eval; the other ranks never call it."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--per-rank", type=int, default=128)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    encoder = nn.Sequential(nn.Linear(32, args.dim), nn.LayerNorm(args.dim))
    with torch.no_grad():
        local = encoder(torch.randn(args.per_rank, 32))

    if rank == 0:
        gathered = torch.empty(world_size * args.per_rank, args.dim)
        dist.all_gather_into_tensor(  # expect: RC101
            gathered,
            local.contiguous(),
        )
        sims = gathered @ gathered.T
        print(f"mean cosine-ish similarity {sims.mean().item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
