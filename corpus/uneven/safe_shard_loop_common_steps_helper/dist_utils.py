"""Helpers that make per-rank counts agree across ranks."""
import torch
import torch.distributed as dist


def common_length(local_len: int) -> int:
    t = torch.tensor([local_len])
    dist.all_reduce(t, op=dist.ReduceOp.MIN)
    return int(t.item())


def sync_gradients(model) -> None:
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad /= dist.get_world_size()
