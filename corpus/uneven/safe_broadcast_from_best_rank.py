"""Hyper-parameter search across ranks: losses are all-gathered, the best rank is the argmin of the gathered (uniform) table, and every rank broadcasts from that same src."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    lr = 10 ** (-1 - rank % 4)
    model = nn.Linear(20, 1)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(args.steps):
        x = torch.randn(64, 20)
        loss = (model(x) - x.mean(1, keepdim=True)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()

    final = loss.detach().reshape(1)
    losses = [torch.zeros(1) for _ in range(world_size)]
    dist.all_gather(losses, final)
    best_rank = int(torch.cat(losses).argmin())
    for p in model.parameters():
        dist.broadcast(p.data, src=best_rank)
    if rank == 0:
        print(f"kept the model of rank {best_rank} (lr={10 ** (-1 - best_rank % 4)})")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
