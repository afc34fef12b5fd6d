"""Every rank completes the same last collective, then all of them stall on the host."""

import time

import torch
import torch.distributed as dist
from _harness import run, settled


def train():
    dist.all_reduce(torch.ones(4))
    dist.barrier()  # fr: last
    settled()
    time.sleep(3600)


if __name__ == "__main__":
    run(train)
