"""Gradient accumulation `continue`s on non-sync micro-steps; the condition depends only on the step counter, the same on all ranks."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--micro-steps", type=int, default=400)
    parser.add_argument("--accum", type=int, default=4)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    world_size = dist.get_world_size()
    model = nn.Linear(16, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    opt.zero_grad()
    for micro_step in range(args.micro_steps):
        loss = model(torch.randn(8, 16)).pow(2).mean() / args.accum
        loss.backward()
        if (micro_step + 1) % args.accum != 0:
            continue
        for p in model.parameters():
            dist.all_reduce(p.grad)
            p.grad /= world_size
        opt.step()
        opt.zero_grad()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
