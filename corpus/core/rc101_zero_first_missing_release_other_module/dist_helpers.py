"""A "main process first" context manager that lost its second half: rank 0 never issues the releasing barrier."""
from contextlib import contextmanager

import torch.distributed as dist


@contextmanager
def main_process_first(rank: int):
    if rank != 0:
        dist.barrier()  # expect: RC101
    yield
