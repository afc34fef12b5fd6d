"""Rank 0 all-reduces the epoch loss for its log line; the other ranks never call all_reduce, so rank 0 hangs."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--lr", type=float, default=0.01)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    model = nn.Linear(16, 1)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)

    for epoch in range(args.epochs):
        epoch_loss = torch.zeros(1)
        for _ in range(args.steps):
            x, y = torch.randn(8, 16), torch.randn(8, 1)
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad /= world_size
            opt.step()
            epoch_loss += loss.detach()
        if rank == 0:
            dist.all_reduce(epoch_loss)  # expect: RC101
            print(f"epoch {epoch} mean loss {epoch_loss.item() / (args.steps * world_size):.4f}")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
