"""A divergence guard `break`s out of training when the local loss exceeds 1e4; only that rank stops, and the others wait in the next step's DDP backward all_reduce."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10000)
    parser.add_argument("--lr", type=float, default=0.3)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = DDP(nn.Sequential(nn.Linear(10, 10), nn.Tanh(), nn.Linear(10, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    for step in range(args.steps):
        x = torch.randn(128, 10)
        y = (x ** 3).sum(dim=1, keepdim=True)
        loss = nn.functional.mse_loss(model(x), y)
        if loss.item() > 1e4:
            print(f"rank {rank}: loss diverged at step {step}")
            break  # expect: RC103
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
