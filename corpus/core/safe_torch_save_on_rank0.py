"""DDP training where only rank 0 writes the checkpoint (torch.save of model.module); the barrier after it runs on every rank."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--out", default="checkpoints")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = DDP(nn.Linear(20, 20))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(args.epochs):
        for _ in range(25):
            loss = model(torch.randn(8, 20)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        if rank == 0:
            os.makedirs(args.out, exist_ok=True)
            state = {"model": model.module.state_dict(), "optim": opt.state_dict(), "epoch": epoch}
            torch.save(state, os.path.join(args.out, f"epoch{epoch}.pt"))
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
