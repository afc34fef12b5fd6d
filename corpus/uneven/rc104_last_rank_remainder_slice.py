"""Rows are split by hand and the last rank also takes the remainder (`end = n if rank == world_size - 1`); its slice is longer, so the all_gather of the per-rank results mismatches in shape."""
import argparse

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
    per_rank = args.rows // world_size
    start = rank * per_rank
    end = args.rows if rank == world_size - 1 else start + per_rank

    scorer = nn.Linear(table.shape[1], 1)
    with torch.no_grad():
        part = scorer(table[start:end]).squeeze(-1)
    parts = [torch.empty(per_rank) for _ in range(world_size)]
    dist.all_gather(parts, part)  # expect: RC104
    if rank == 0:
        torch.save(torch.cat(parts), "scores.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
