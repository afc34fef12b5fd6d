"""Fix for the hand-made split: every rank pads its slice to `ceil(rows / world_size)`, so all_gather sees the same shape everywhere; rank 0 trims the padding afterwards."""
import argparse
import math

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1030)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    table = torch.load("table.pt")[: args.rows]
    per_rank = math.ceil(args.rows / world_size)
    start = rank * per_rank
    end = min(start + per_rank, args.rows)

    scorer = nn.Linear(table.shape[1], 1)
    with torch.no_grad():
        part = scorer(table[start:end]).squeeze(-1)
    padded = torch.zeros(per_rank)
    padded[: part.numel()] = part
    parts = [torch.empty(per_rank) for _ in range(world_size)]
    dist.all_gather(parts, padded)
    if rank == 0:
        torch.save(torch.cat(parts)[: args.rows], "scores.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
