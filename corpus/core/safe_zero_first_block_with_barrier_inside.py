"""A barrier inside a "rank 0 first" block: out of turn, but a barrier meets a barrier, so on gloo
every rank gets through (rank 0's inner barrier pairs with the others' waiting one, and its
releasing barrier with theirs inside the block). Look-alike of rc106_zero_first_block_all_reduces.py.
"""
import os
from contextlib import contextmanager

import torch
import torch.distributed as dist


@contextmanager
def torch_distributed_zero_first(local_rank: int):
    if local_rank != 0:
        dist.barrier()
    yield
    if local_rank == 0:
        dist.barrier()


def prepare(path: str) -> None:
    if not os.path.exists(path):
        torch.save(torch.zeros(4), path)
    dist.barrier()


def main():
    dist.init_process_group("gloo")
    local_rank = int(os.environ["LOCAL_RANK"])
    with torch_distributed_zero_first(local_rank):
        prepare("cache.pt")
    print(torch.load("cache.pt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
