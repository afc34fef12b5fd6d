"""Rank 0 calls sync.reduce_and_report(), the rest sync.reduce_silently(); both reach one all_reduce, so all ranks match."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn

from sync import reduce_and_report, reduce_silently


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Linear(9, 9)
    opt = torch.optim.SGD(model.parameters(), lr=0.02)
    for epoch in range(args.epochs):
        total = torch.zeros(1)
        for _ in range(30):
            loss = model(torch.randn(4, 9)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.detach()
        if rank == 0:
            reduce_and_report(total, epoch)
        else:
            reduce_silently(total)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
