"""The look-alike of rc104_stats_buffer_dtype_chosen_by_rank.py: the dtype comes from the run's
configuration, the same on every rank."""
import torch
import torch.distributed as dist


def reduce_stats(loss_sum: float, tokens: int, precise: bool) -> torch.Tensor:
    dtype = torch.float64 if precise else torch.float32
    stats = torch.tensor([loss_sum, float(tokens)], dtype=dtype)
    dist.all_reduce(stats)
    return stats
