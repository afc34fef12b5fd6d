"""sync_bn_stats() returns early when its `rank` parameter is 0 during warm-up, skipping the all_reduce the others issue."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def sync_bn_stats(bn_layers, rank: int, warmed_up: bool) -> None:
    if rank == 0 and not warmed_up:
        return  # expect: RC102
    for bn in bn_layers:
        dist.all_reduce(bn.running_mean)
        bn.running_mean /= dist.get_world_size()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=50)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 1))
    bn_layers = [model[1]]
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(args.steps):
        loss = model(torch.randn(32, 8)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sync_bn_stats(bn_layers, dist.get_rank(), step >= args.warmup)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
