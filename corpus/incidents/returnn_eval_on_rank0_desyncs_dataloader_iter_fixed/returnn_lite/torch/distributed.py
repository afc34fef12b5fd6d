"""torch.distributed helpers (returnn/torch/distributed.py): set up the process group from the
torchrun environment, and run the unwrapped module inside the context DDP's own forward would set
up, since RETURNN passes the original module to the user's `train_step`."""
from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Optional

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


class DistributedContext:
    def __init__(self, options: dict):
        dist.init_process_group(backend=options.get("backend", "nccl"))
        self._rank = dist.get_rank()
        self._size = dist.get_world_size()
        self._local_rank = int(os.environ["LOCAL_RANK"])
        print(f"Torch distributed initialized. rank {self._rank} / size {self._size}, local rank {self._local_rank}")

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def local_rank(self) -> int:
        return self._local_rank


_ctx: Optional[DistributedContext] = None


def get_ctx(config) -> Optional[DistributedContext]:
    global _ctx
    if config.get("torch_distributed") is None:
        return None
    if _ctx is None:
        _ctx = DistributedContext(config["torch_distributed"])
    return _ctx


def get_device_ids():
    return [int(os.environ["LOCAL_RANK"])]


@contextmanager
def ddp_train_forward_ctx(pt_model: DistributedDataParallel):
    """Mirrors what DistributedDataParallel.forward does around the module call, for the reducer."""
    if torch.is_grad_enabled() and pt_model.require_backward_grad_sync:
        pt_model.reducer.prepare_for_forward()
    yield
    if torch.is_grad_enabled() and pt_model.require_backward_grad_sync:
        pt_model.require_forward_param_sync = True
        pt_model.reducer.prepare_for_backward([])
    else:
        pt_model.require_forward_param_sync = False
