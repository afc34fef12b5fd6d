"""A Trainer with self.rank: the reducing method is called by every rank, and only logging sits under `if self.rank == 0`."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


class Trainer:
    def __init__(self, model: nn.Module):
        self.rank = dist.get_rank()
        self.world_size = dist.get_world_size()
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def reduce_metrics(self, stats: torch.Tensor) -> torch.Tensor:
        dist.all_reduce(stats)
        return stats / self.world_size

    def report(self, epoch: int, stats: torch.Tensor) -> None:
        print(f"epoch {epoch}: loss {stats[0].item():.4f}")

    def fit(self, epochs: int, steps: int) -> None:
        for epoch in range(epochs):
            stats = torch.zeros(1)
            for _ in range(steps):
                loss = self.model(torch.randn(8, 6)).pow(2).mean()
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                stats[0] += loss.item() / steps
            stats = self.reduce_metrics(stats)
            if self.rank == 0:
                self.report(epoch, stats)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    dist.init_process_group("gloo")
    Trainer(nn.Linear(6, 1)).fit(args.epochs, steps=30)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
