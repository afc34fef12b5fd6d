"""Rank 0 enters an extra all_reduce that no other rank calls."""

import torch
import torch.distributed as dist
from _harness import run, settled


def train():
    rank = dist.get_rank()
    grad = torch.ones(4)
    dist.all_reduce(grad)
    dist.barrier()
    if rank == 0:
        settled()
        dist.all_reduce(grad)  # fr: divergent
    settled()


if __name__ == "__main__":
    run(train)
