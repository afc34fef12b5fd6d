"""The rank guard is the outer one and a uniform flag the inner one; the stats all_reduce still runs on rank 0 only."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--sync-bn-stats", action="store_true")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Sequential(nn.Linear(10, 20), nn.BatchNorm1d(20), nn.ReLU(), nn.Linear(20, 1))
    opt = torch.optim.Adam(model.parameters())
    for _ in range(args.steps):
        loss = model(torch.randn(32, 10)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()

    bn = model[1]
    if rank == 0:
        print("training done, exporting model")
        if args.sync_bn_stats:
            dist.all_reduce(bn.running_mean)  # expect: RC101
            bn.running_mean /= dist.get_world_size()
        torch.save(model.state_dict(), "model.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
