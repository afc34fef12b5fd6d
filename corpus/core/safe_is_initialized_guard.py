"""`if dist.is_initialized():` is true on every rank or on none, so the barrier it guards is issued uniformly."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn


def maybe_init():
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        dist.init_process_group("gloo")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()

    maybe_init()
    model = nn.Linear(4, 2)
    opt = torch.optim.Adam(model.parameters())
    for _ in range(args.steps):
        loss = model(torch.randn(8, 4)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
