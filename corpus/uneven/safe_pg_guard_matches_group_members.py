"""Every rank creates the subgroup with `dist.new_group(ranks)`, and only its members (`if rank in ranks:`) all-reduce on it: the guard selects exactly the group, so the collective is complete."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    ranks = list(range(0, world_size, 2))
    even_group = dist.new_group(ranks)
    head = nn.Linear(32, 8)
    for _ in range(args.steps):
        out = head(torch.randn(4, 32))
        if rank in ranks:
            dist.all_reduce(out, group=even_group)
        dist.all_reduce(out)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
