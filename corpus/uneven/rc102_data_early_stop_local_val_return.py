"""Early stopping on the local validation loss: the rank whose own loss stopped improving `return`s from fit() while the others train another epoch and hang in DDP's backward all_reduce."""
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

    def local_val_loss(self) -> float:
        with torch.no_grad():
            x = torch.randn(256, 16)
            return nn.functional.mse_loss(self.model(x), x[:, :4]).item()

    def fit(self, epochs: int, steps: int) -> None:
        best, bad_epochs = float("inf"), 0
        for epoch in range(epochs):
            for _ in range(steps):
                x = torch.randn(32, 16)
                loss = nn.functional.mse_loss(self.model(x), x[:, :4])
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
            val = self.local_val_loss()
            if val < best:
                best, bad_epochs = val, 0
            else:
                bad_epochs += 1
            if bad_epochs >= self.patience:
                print(f"early stop at epoch {epoch}, best {best:.4f}")
                return  # expect: RC102


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
