"""Trainer.sync_metrics() issues an all_reduce; train_epoch() calls it only under `if self.rank == 0`, so rank 0 hangs."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


class Trainer:
    def __init__(self, model: nn.Module, lr: float):
        self.rank = dist.get_rank()
        self.world_size = dist.get_world_size()
        self.model = model
        self.opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    def sync_metrics(self, stats: torch.Tensor) -> torch.Tensor:
        dist.all_reduce(stats)
        return stats / self.world_size

    def train_epoch(self, epoch: int, steps: int) -> None:
        stats = torch.zeros(2)
        for _ in range(steps):
            x, y = torch.randn(32, 20), torch.randint(0, 2, (32,))
            logits = self.model(x)
            loss = nn.functional.cross_entropy(logits, y)
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            stats[0] += loss.item()
            stats[1] += (logits.argmax(1) == y).float().mean().item()
        if self.rank == 0:
            stats = self.sync_metrics(stats)  # expect: RC101
            print(f"epoch {epoch}: loss={stats[0] / steps:.3f} acc={stats[1] / steps:.3f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()
    dist.init_process_group("gloo")
    trainer = Trainer(nn.Linear(20, 2), lr=0.05)
    for epoch in range(args.epochs):
        trainer.train_epoch(epoch, args.steps)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
