"""Rank 1 is stuck on the host (a sleep standing in for a data loader) before a barrier."""

import time

import torch
import torch.distributed as dist
from _harness import run, settled


def train():
    rank = dist.get_rank()
    batch = torch.ones(4)
    dist.all_reduce(batch)
    if rank == 1:
        settled()
        time.sleep(3600)
    settled()
    dist.barrier()  # fr: divergent


if __name__ == "__main__":
    run(train)
