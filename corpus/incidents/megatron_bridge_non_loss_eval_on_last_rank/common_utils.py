"""Rank helpers of a Megatron-Bridge style training package (trimmed).

Part of the reconstruction of https://github.com/NVIDIA-NeMo/Megatron-Bridge/pull/6025;
see eval.py for the incident description.
"""
import os

import torch.distributed as dist


def get_rank_safe() -> int:
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank()
    return int(os.getenv("RANK", "0"))


def get_world_size_safe() -> int:
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size()
    return int(os.getenv("WORLD_SIZE", "1"))


def is_last_rank() -> bool:
    """The last global rank; with pipeline parallelism it holds the last pipeline stage."""
    return get_rank_safe() == get_world_size_safe() - 1


def print_rank_0(message: str) -> None:
    if get_rank_safe() == 0:
        print(message, flush=True)


def print_rank_last(message: str) -> None:
    if is_last_rank():
        print(message, flush=True)
