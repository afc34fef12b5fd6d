"""Safe twin of fabric_make_dataset_rank0_return_skips_barrier: rank 0 does only the I/O under the
rank check, every rank calls `fabric.barrier()`, and the dataset is built on all ranks afterwards
(the pattern given by the maintainer in Lightning-AI/pytorch-lightning#20536).
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
            # I/O on one rank only
            os.makedirs(self.args.cache_dir, exist_ok=True)
            np.savez(os.path.join(self.args.cache_dir, "features.npz"), x=x.numpy(), y=y.numpy())
        fabric.barrier()  # make sure no one runs ahead
        # create the dataset on all ranks
        return TensorDataset(x, y)

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
