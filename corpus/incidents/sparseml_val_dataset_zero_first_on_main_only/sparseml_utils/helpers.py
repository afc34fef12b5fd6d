"""Distributed helpers used by the integration scripts (as sparseml/pytorch/utils/helpers.py)."""
from contextlib import contextmanager
from typing import List, Tuple, Union

import torch
from torch.nn import Module
from torch.nn.parallel import DistributedDataParallel


@contextmanager
def torch_distributed_zero_first(local_rank: int):
    """Make all processes in distributed training wait for each local rank 0 process to do
    something (download / extract a dataset or a model), then let them through."""
    if local_rank not in [-1, 0]:
        torch.distributed.barrier()
    yield
    if local_rank == 0:
        torch.distributed.barrier()


def model_to_device(model: Module, device: Union[str, int], ddp: bool = False) -> Tuple[Module, str, List]:
    if ddp:
        model = model.to(device)
        model = DistributedDataParallel(model, device_ids=[device], output_device=device)
        return model, f"cuda:{device}", [device]
    return model.to(device), device, []
