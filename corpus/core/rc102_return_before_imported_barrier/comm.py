"""Thin wrappers around torch.distributed used across the project."""
import torch.distributed as dist


def get_rank() -> int:
    return dist.get_rank() if dist.is_initialized() else 0


def sync_all() -> None:
    if dist.is_initialized():
        dist.barrier()
