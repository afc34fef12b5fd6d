"""Environment helpers that work before and after init_process_group."""

import os
from dataclasses import dataclass
from datetime import timedelta

import torch
import torch.distributed as dist


def get_world_size_safe() -> int:
    """World size from the process group when there is one, else from the launcher's env."""
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size()
    return int(os.environ.get("WORLD_SIZE", "1"))


def get_local_rank_preinit() -> int:
    """Node-local rank as torchrun exports it; usable before the process group exists."""
    return int(os.environ.get("LOCAL_RANK", "0"))


def get_local_world_size_preinit() -> int:
    """Number of processes on this node as torchrun exports it."""
    return int(os.environ.get("LOCAL_WORLD_SIZE", "1"))


@dataclass
class DistInfo:
    backend: str
    rank: int
    world_size: int
    device: torch.device
    is_main: bool


def initialize_distributed(backend: str = "nccl", timeout_minutes: int = 30) -> DistInfo:
    """Join the job torchrun started (or run single-process when WORLD_SIZE is unset)."""
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    local_rank = get_local_rank_preinit()
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
    else:
        device = torch.device("cpu")
        backend = "gloo"
    if world_size > 1 and not dist.is_initialized():
        dist.init_process_group(backend=backend, timeout=timedelta(minutes=timeout_minutes))
    rank = dist.get_rank() if dist.is_initialized() else 0
    return DistInfo(backend, rank, world_size, device, rank == 0)
