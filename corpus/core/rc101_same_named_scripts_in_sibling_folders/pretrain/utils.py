"""Pre-training helpers. all_reduce_metrics() averages over the data-parallel group: every rank
must call it."""
import torch
import torch.distributed as dist


def get_batch(batch_size: int, dim: int):
    return torch.randn(batch_size, dim), torch.randint(0, 4, (batch_size,))


def all_reduce_metrics(metrics: torch.Tensor) -> torch.Tensor:
    dist.all_reduce(metrics)
    return metrics / dist.get_world_size()
