"""A `raise` on a bad batch-size/world-size combination: both values are uniform, so every rank raises together."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--global-batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    world_size = dist.get_world_size()
    if args.global_batch % world_size != 0:
        raise ValueError(f"global batch {args.global_batch} is not divisible by world size {world_size}")
    local_batch = args.global_batch // world_size

    model = nn.Linear(10, 10)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(args.steps):
        loss = model(torch.randn(local_batch, 10)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        opt.step()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
