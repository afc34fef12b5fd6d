"""Distributed helpers: is_main() and an all-rank loss average."""
import torch
import torch.distributed as dist


def is_main() -> bool:
    return dist.get_rank() == 0


def average(t: torch.Tensor) -> torch.Tensor:
    t = t.detach().clone()
    dist.all_reduce(t)
    return t / dist.get_world_size()
