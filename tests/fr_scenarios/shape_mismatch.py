"""The ranks disagree on a tensor's shape: the last rank's buffer has 3 elements, the others 4."""

import torch
import torch.distributed as dist
from _harness import run, settled


def train():
    rank = dist.get_rank()
    world = dist.get_world_size()
    dist.all_reduce(torch.ones(4))
    length = 3 if rank == world - 1 else 4
    buf = torch.ones(length)
    settled()
    dist.all_reduce(buf)  # fr: divergent
    settled()


if __name__ == "__main__":
    run(train)
