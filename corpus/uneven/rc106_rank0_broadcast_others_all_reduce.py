"""Syncing the learning-rate scale: rank 0 broadcasts its value while the other ranks all_reduce theirs; both arms issue one collective, but different ones, so they never match."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--warmup", type=int, default=100)
    parser.add_argument("--steps", type=int, default=1000)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Linear(32, 32)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scale = torch.ones(1)
    for step in range(args.steps):
        loss = model(torch.randn(8, 32)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % args.warmup == 0:
            if rank == 0:  # expect: RC106
                scale.fill_(min(1.0, (step + 1) / args.warmup))
                dist.broadcast(scale, src=0)
            else:
                dist.all_reduce(scale)
            for group in opt.param_groups:
                group["lr"] = 0.1 * scale.item()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
