"""The last rank crashes after the first collective: it leaves no dump, the others wait for it."""

import torch
import torch.distributed as dist
from _harness import crash_without_dump, run, settled


def train():
    rank = dist.get_rank()
    world = dist.get_world_size()
    dist.all_reduce(torch.ones(4))
    if rank == world - 1:
        crash_without_dump()
    settled()
    dist.all_reduce(torch.ones(4))  # fr: divergent


if __name__ == "__main__":
    run(train)
