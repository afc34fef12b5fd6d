"""compute_mean() all-reduces internally; callers must call it on every rank."""
import torch
import torch.distributed as dist


def compute_mean(total: float, count: int) -> float:
    t = torch.tensor([total, float(count)], dtype=torch.float64)
    dist.all_reduce(t)
    return (t[0] / t[1]).item()
