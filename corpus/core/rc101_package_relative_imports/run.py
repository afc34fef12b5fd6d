"""Rank 0 calls trainkit.log_epoch (re-exported by the package __init__), which all-reduces via relative imports: it hangs."""
import argparse
import logging

import torch
import torch.distributed as dist
import torch.nn as nn

from trainkit import log_epoch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Linear(10, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(args.epochs):
        total = 0.0
        for _ in range(50):
            loss = model(torch.randn(8, 10)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        if rank == 0:
            log_epoch(epoch, total / 50)  # expect: RC101
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
