"""Low-level reductions: global_mean() all-reduces over the default group."""
import torch
import torch.distributed as dist


def global_mean(total: float, count: int) -> float:
    t = torch.tensor([total, float(count)], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return (t[0] / t[1]).item()
