"""`rank == 0 and print(...)` short-circuits around a print only; the all_reduce before it is unconditional."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=4)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    is_main = rank == 0
    model = nn.Linear(7, 1)
    opt = torch.optim.Adam(model.parameters())
    for epoch in range(args.epochs):
        epoch_loss = torch.zeros(1)
        for _ in range(20):
            loss = model(torch.randn(8, 7)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            epoch_loss += loss.detach()
        dist.all_reduce(epoch_loss)
        rank == 0 and print(f"epoch {epoch}: loss {epoch_loss.item():.4f}")
        is_main or print(f"rank {rank} finished epoch {epoch}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
