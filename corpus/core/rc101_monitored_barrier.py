"""A monitored_barrier meant to find stragglers is issued only by rank 0, so rank 0 itself times out waiting for the rest."""
import argparse
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()

    dist.init_process_group("gloo", timeout=timedelta(minutes=10))
    rank = dist.get_rank()
    model = nn.Conv1d(4, 8, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(args.epochs):
        for _ in range(20):
            loss = model(torch.randn(2, 4, 50)).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        if rank == 0:
            print(f"epoch {epoch} finished on rank 0, checking for stragglers")
            dist.monitored_barrier(timeout=timedelta(seconds=60), wait_all_ranks=True)  # expect: RC101
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
