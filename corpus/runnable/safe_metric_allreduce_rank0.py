"""Every rank all-reduces the epoch loss; only rank 0 prints it."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    torch.manual_seed(0)
    model = nn.Linear(16, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

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
        dist.all_reduce(epoch_loss)
        if rank == 0:
            print(f"epoch {epoch} mean loss {epoch_loss.item() / (args.steps * world_size):.4f}")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
