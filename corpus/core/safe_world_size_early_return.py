"""sync_running_stats() returns early when world size is 1; world size is uniform, so either every rank returns or none does."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def sync_running_stats(bn: nn.BatchNorm1d) -> None:
    world_size = dist.get_world_size()
    if world_size == 1:
        return
    dist.all_reduce(bn.running_mean)
    dist.all_reduce(bn.running_var)
    bn.running_mean /= world_size
    bn.running_var /= world_size


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    model = nn.Sequential(nn.Linear(6, 12), nn.BatchNorm1d(12), nn.ReLU(), nn.Linear(12, 1))
    opt = torch.optim.Adam(model.parameters())
    for _ in range(args.epochs):
        for _ in range(40):
            loss = model(torch.randn(16, 6)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        sync_running_stats(model[1])
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
