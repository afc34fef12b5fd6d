"""Fix for early stopping: the validation loss is all-reduced, rank 0 decides, the decision is broadcast, and every rank returns at the same epoch."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, model: nn.Module, patience: int):
        self.model = DDP(model)
        self.opt = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.patience = patience

    def global_val_loss(self) -> float:
        with torch.no_grad():
            x = torch.randn(256, 16)
            loss = nn.functional.mse_loss(self.model(x), x[:, :4]).reshape(1)
        dist.all_reduce(loss)
        return loss.item() / dist.get_world_size()

    def fit(self, epochs: int, steps: int) -> None:
        best, bad_epochs = float("inf"), 0
        stop = torch.zeros(1)
        for epoch in range(epochs):
            for _ in range(steps):
                x = torch.randn(32, 16)
                loss = nn.functional.mse_loss(self.model(x), x[:, :4])
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            val = self.global_val_loss()
            if dist.get_rank() == 0:
                best, bad_epochs = (val, 0) if val < best else (best, bad_epochs + 1)
                stop.fill_(float(bad_epochs >= self.patience))
            dist.broadcast(stop, src=0)
            if stop.item() > 0:
                return


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--patience", type=int, default=3)
    args = parser.parse_args()
    dist.init_process_group("gloo")
    Trainer(nn.Linear(16, 4), args.patience).fit(args.epochs, steps=50)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
