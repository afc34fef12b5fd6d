"""Regression training with Lightning Fabric under DDP: the runner prepares its dataset on global
rank 0 (standing in for disk I/O) and makes the other ranks wait at `fabric.barrier()`, then sets
up the model and the loader with Fabric.

Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/20536 ("lightning.Fabric meets
deadlock when loading nn.Module", closed)
Project: Lightning-AI/pytorch-lightning (lightning.fabric)
What hung: the run deadlocked when Fabric set up the module. The maintainer's diagnosis: "The issue
arises because the two ranks diverge, specifically because make_dataset returns `None` on rank 1".
`make_dataset` returns from inside `if fabric.global_rank == 0:`, so rank 0 never reaches the
`fabric.barrier()` below it and goes on to `fabric.setup(...)` (the DDP wrapper's parameter
broadcast), while the other ranks sit in the barrier -- and, once out of it, return None instead
of a dataset.
Fix (maintainer's answer, lantiga): do the rank-0-only I/O under the rank check, call
`fabric.barrier()` on every rank, and build the dataset on all ranks after the barrier ("if you
need to actually do I/O, this is the pattern to follow").
Expected rankcheck finding: RC102 on the `return dataset` inside `if fabric.global_rank == 0:`,
an exit taken on rank 0 only before the `fabric.barrier()` the other ranks issue.
Inferred: the reporter's model, data and CSV caching are written for this reconstruction.
"""
import argparse
import os

import lightning as L
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

fabric = L.Fabric(accelerator="cuda", devices=2, strategy="ddp")


class Regressor(nn.Module):
    def __init__(self, in_dim, hidden=128):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


class Runner:
    def __init__(self, args):
        self.args = args

    def load_arrays(self):
        cache = os.path.join(self.args.cache_dir, "features.npz")
        if os.path.exists(cache):
            data = np.load(cache)
            return torch.from_numpy(data["x"]).float(), torch.from_numpy(data["y"]).float()
        raw = np.loadtxt(self.args.csv, delimiter=",", skiprows=1)
        x, y = raw[:, :-1], raw[:, -1]
        x = (x - x.mean(0)) / (x.std(0) + 1e-6)
        return torch.from_numpy(x).float(), torch.from_numpy(y).float()

    def make_dataset(self, x, y):
        if fabric.global_rank == 0:
            # the real program does some I/O here, hence the barrier below
            os.makedirs(self.args.cache_dir, exist_ok=True)
            np.savez(os.path.join(self.args.cache_dir, "features.npz"), x=x.numpy(), y=y.numpy())
            dataset = TensorDataset(x, y)
            return dataset  # expect: RC102
        fabric.barrier()

    def run(self):
        x, y = self.load_arrays()
        dataset = self.make_dataset(x, y)
        loader = DataLoader(dataset, batch_size=self.args.batch_size, shuffle=True)
        model = Regressor(x.size(1))
        optimizer = torch.optim.Adam(model.parameters(), lr=self.args.lr)
        model, optimizer = fabric.setup(model, optimizer)
        loader = fabric.setup_dataloaders(loader)

        for epoch in range(self.args.epochs):
            model.train()
            total = torch.zeros((), device=fabric.device)
            for xb, yb in loader:
                optimizer.zero_grad()
                loss = nn.functional.mse_loss(model(xb), yb)
                fabric.backward(loss)
                optimizer.step()
                total += loss.detach()
            total = fabric.all_reduce(total, reduce_op="mean")
            fabric.print(f"epoch {epoch}: loss {total.item() / len(loader):.4f}")

        state = {"model": model, "optimizer": optimizer}
        fabric.save(os.path.join(self.args.cache_dir, "last.ckpt"), state)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--csv", required=True)
    parser.add_argument("--cache_dir", default="cache")
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--epochs", type=int, default=20)
    args = parser.parse_args()
    fabric.launch()
    Runner(args).run()


if __name__ == "__main__":
    main()
