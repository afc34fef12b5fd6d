"""The SummaryWriter exists only on rank 0 (`... if rank == 0 else None`); the `if writer` branches write scalars, no collectives."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.tensorboard import SummaryWriter


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--logdir", default="runs/exp")
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    writer = SummaryWriter(args.logdir) if rank == 0 else None
    model = nn.Linear(10, 10)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(args.steps):
        loss = model(torch.randn(16, 10)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        opt.step()
        global_loss = loss.detach().reshape(1)
        dist.all_reduce(global_loss)
        if writer is not None:
            writer.add_scalar("loss", global_loss.item() / dist.get_world_size(), step)
    if writer:
        writer.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
