"""Rank 0 alone calls metrics.compute_mean(), which all-reduces one module away: rank 0 waits for ranks that never call it."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn

from metrics import compute_mean


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=40)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    for epoch in range(args.epochs):
        loss_sum, n = 0.0, 0
        for _ in range(args.steps):
            x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
            loss = nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss_sum += loss.item() * x.shape[0]
            n += x.shape[0]
        if rank == 0:
            mean_loss = compute_mean(loss_sum, n)  # expect: RC101
            print(f"epoch {epoch}: mean loss {mean_loss:.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
