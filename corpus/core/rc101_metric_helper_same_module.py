"""Validation metrics are computed "on rank 0 only", but global_mean() all-reduces internally: rank 0 waits forever."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def global_mean(value: float) -> float:
    t = torch.tensor([value], dtype=torch.float64)
    dist.all_reduce(t)
    return t.item() / dist.get_world_size()


def validate(model, batches):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for x, y in batches:
            total += nn.functional.cross_entropy(model(x), y).item()
    model.train()
    return total / max(len(batches), 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--lr", type=float, default=3e-4)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    val_batches = [(torch.randn(16, 32), torch.randint(0, 10, (16,))) for _ in range(4)]

    for epoch in range(args.epochs):
        x, y = torch.randn(16, 32), torch.randint(0, 10, (16,))
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()

        if rank == 0:
            val_loss = global_mean(validate(model, val_batches))  # expect: RC101
            print(f"epoch={epoch} val_loss={val_loss:.4f}")

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
