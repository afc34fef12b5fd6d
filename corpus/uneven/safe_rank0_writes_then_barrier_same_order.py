"""Fix for the swapped order: every rank all-reduces the stats first, rank 0 writes the file, and every rank then waits at the same barrier before reading it."""
import argparse
import json

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Linear(10, 2)
    opt = torch.optim.Adam(model.parameters())
    for epoch in range(args.epochs):
        stats = torch.zeros(2)
        for _ in range(50):
            x, y = torch.randn(16, 10), torch.randint(0, 2, (16,))
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            stats += torch.tensor([loss.item(), 1.0])
        if rank == 0:
            dist.all_reduce(stats)
            with open("summary.json", "w") as f:
                json.dump({"epoch": epoch, "loss": (stats[0] / stats[1]).item()}, f)
            dist.barrier()
        else:
            dist.all_reduce(stats)
            dist.barrier()
            with open("summary.json") as f:
                print(rank, json.load(f))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
