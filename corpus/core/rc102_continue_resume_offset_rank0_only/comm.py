"""Reductions used by the training loop."""
import torch
import torch.distributed as dist


def reduce_mean(t: torch.Tensor) -> torch.Tensor:
    t = t.detach().clone()
    dist.all_reduce(t)
    return t / dist.get_world_size()
