"""Metric helpers; compute_mean() all-reduces internally, so every rank must call it."""
import torch
import torch.distributed as dist


def compute_mean(total: float, count: int) -> float:
    t = torch.tensor([total, float(count)], dtype=torch.float64)
    dist.all_reduce(t)
    return (t[0] / t[1]).item()
