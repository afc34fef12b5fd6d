"""Early stopping on the all-reduced validation loss: the value came out of all_reduce, so every rank breaks at the same epoch."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--target", type=float, default=0.05)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    model = nn.Linear(5, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(args.epochs):
        for _ in range(20):
            x = torch.randn(16, 5)
            loss = (model(x) - x.sum(1, keepdim=True)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            x = torch.randn(64, 5)
            val = (model(x) - x.sum(1, keepdim=True)).pow(2).mean().reshape(1)
        dist.all_reduce(val)
        val /= world_size
        if val.item() < args.target:
            if rank == 0:
                print(f"target reached at epoch {epoch}: {val.item():.4f}")
            break
        dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
