"""Rank 0 keeps its running statistics in float64 for a precise log line; the other ranks use
float32. The buffers have one shape but not one dtype, and the all-reduce of tensors of different
dtypes fails or hangs (NCCL and gloo reduce bytes of the dtype each rank passes)."""
import torch
import torch.distributed as dist


def reduce_stats(loss_sum: float, tokens: int) -> torch.Tensor:
    rank = dist.get_rank()
    dtype = torch.float64 if rank == 0 else torch.float32
    stats = torch.tensor([loss_sum, float(tokens)], dtype=dtype)
    dist.all_reduce(stats)  # expect: RC104
    return stats
