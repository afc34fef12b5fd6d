"""`if rank == 0: ...; dist.barrier() else: dist.barrier()`: both arms issue one barrier, so every rank meets there."""
import argparse
import json

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--summary", default="summary.json")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Linear(3, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        for _ in range(10):
            loss = model(torch.randn(5, 3)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        if rank == 0:
            with open(args.summary, "w") as f:
                json.dump({"epoch": epoch, "loss": loss.item()}, f)
            dist.barrier()
        else:
            dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
