"""Meant to share one data-order seed, but `dist.broadcast(seed, src=rank)` names a different source on every rank; each rank waits to receive from a different root."""
import argparse
import random

import torch
import torch.distributed as dist
import torch.nn as nn


def shared_seed(rank: int) -> int:
    seed = torch.tensor([random.randint(0, 2**31 - 1)])
    dist.broadcast(seed, src=rank)  # expect: RC104
    return int(seed.item())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(shared_seed(rank))
    model = nn.Linear(16, 16)
    for _ in range(args.steps):
        out = model(torch.randn(4, 16))
        dist.all_reduce(out)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
