"""Fix for the divergence guard: rank 0 decides from the all-reduced loss and broadcasts the stop flag, so the `break` is taken by every rank at the same step."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10000)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = DDP(nn.Sequential(nn.Linear(10, 10), nn.Tanh(), nn.Linear(10, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.3, momentum=0.9)
    for step in range(args.steps):
        x = torch.randn(128, 10)
        loss = nn.functional.mse_loss(model(x), (x ** 3).sum(dim=1, keepdim=True))
        opt.zero_grad()
        loss.backward()
        opt.step()

        mean_loss = loss.detach().reshape(1)
        dist.all_reduce(mean_loss)
        stop = torch.zeros(1)
        if rank == 0 and mean_loss.item() / dist.get_world_size() > 1e4:
            print(f"loss diverged at step {step}")
            stop.fill_(1.0)
        dist.broadcast(stop, src=0)
        if stop.item() > 0:
            break
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
