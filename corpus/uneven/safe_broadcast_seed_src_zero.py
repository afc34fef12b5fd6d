"""Fix for sharing a seed: rank 0's random seed is broadcast with `src=0` on every rank; the value differs before the broadcast, the root does not."""
import argparse
import random

import torch
import torch.distributed as dist
import torch.nn as nn


def shared_seed() -> int:
    seed = torch.tensor([random.randint(0, 2**31 - 1)])
    dist.broadcast(seed, src=0)
    return int(seed.item())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    torch.manual_seed(shared_seed())
    model = nn.Linear(16, 16)
    for _ in range(args.steps):
        out = model(torch.randn(4, 16))
        dist.all_reduce(out)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
