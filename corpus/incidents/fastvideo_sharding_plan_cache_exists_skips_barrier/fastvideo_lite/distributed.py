"""Process-group state of the training stack: world and sequence-parallel groups, read back
through getters (as fastvideo.v1.distributed)."""
import os

import torch
import torch.distributed as dist

_WORLD_RANK = 0
_WORLD_SIZE = 1
_SP_SIZE = 1
_SP_GROUP = None


def init_distributed_environment(sp_size: int = 1) -> None:
    global _WORLD_RANK, _WORLD_SIZE, _SP_SIZE, _SP_GROUP
    dist.init_process_group(backend="nccl")
    _WORLD_RANK = dist.get_rank()
    _WORLD_SIZE = dist.get_world_size()
    _SP_SIZE = sp_size
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
    for start in range(0, _WORLD_SIZE, sp_size):
        group = dist.new_group(list(range(start, start + sp_size)))
        if start <= _WORLD_RANK < start + sp_size:
            _SP_GROUP = group


def get_world_rank() -> int:
    return _WORLD_RANK


def get_world_size() -> int:
    return _WORLD_SIZE


def get_sp_world_size() -> int:
    return _SP_SIZE
