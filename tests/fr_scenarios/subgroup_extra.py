"""Ranks 0 and 1 share a subgroup; rank 1 enters an extra all_reduce on it, rank 0 does not."""

import torch
import torch.distributed as dist
from _harness import run, settled


def train():
    rank = dist.get_rank()
    pair = dist.new_group([0, 1])
    grad = torch.ones(4)
    dist.all_reduce(grad)
    if rank in (0, 1):
        dist.all_reduce(grad, group=pair)
    if rank == 1:
        settled()
        dist.all_reduce(grad, group=pair)  # fr: divergent
    settled()


if __name__ == "__main__":
    run(train)
