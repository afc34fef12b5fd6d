"""Test-time adaptation loops `while loss.item() > tol` on each rank's own batch; the ranks converge after different numbers of steps, and the ones still looping wait in DDP's backward all_reduce."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tol", type=float, default=0.05)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = DDP(nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 8)))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x = torch.load(f"adapt_batch_{rank}.pt")

    loss = nn.functional.mse_loss(model(x), x)
    steps = 0
    while loss.item() > args.tol:  # expect: RC103
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss = nn.functional.mse_loss(model(x), x)
        steps += 1
    print(f"rank {rank} adapted in {steps} steps")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
