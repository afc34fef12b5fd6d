"""Rank 0 calls stats.all_gather_metrics()/broadcast_summary(): collective-sounding names, but no collective behind them."""
import argparse
from collections import defaultdict

import torch
import torch.distributed as dist
import torch.nn as nn

from stats import all_gather_metrics, broadcast_summary


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Linear(8, 2)
    opt = torch.optim.Adam(model.parameters())
    history = defaultdict(list)
    for _ in range(args.steps):
        x, y = torch.randn(16, 8), torch.randint(0, 2, (16,))
        logits = model(x)
        loss = nn.functional.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        opt.step()
        history["loss"].append(loss.item())
        history["acc"].append((logits.argmax(1) == y).float().mean().item())
    if rank == 0:
        summary = all_gather_metrics(history)
        print("rank 0 summary:", broadcast_summary(summary))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
