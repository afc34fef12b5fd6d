"""Gradients are all-reduced only `if world_size > 1`: world size is the same on every rank, so all ranks agree."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    world_size = dist.get_world_size()
    model = nn.Sequential(nn.Linear(10, 10), nn.ReLU(), nn.Linear(10, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(args.steps):
        loss = model(torch.randn(16, 10)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        if world_size > 1:
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad /= world_size
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
