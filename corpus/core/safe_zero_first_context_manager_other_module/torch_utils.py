"""Distributed helpers; torch_distributed_zero_first() lets local rank 0 go first (barriers on complementary ranks)."""
from contextlib import contextmanager

import torch.distributed as dist


@contextmanager
def torch_distributed_zero_first(local_rank: int):
    # -1 means "not distributed": no process group, so neither barrier runs.
    if local_rank not in (-1, 0):
        dist.barrier()
    yield
    if local_rank == 0:
        dist.barrier()
