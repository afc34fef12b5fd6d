"""Rank 0 validates the metrics it is about to reduce and raises on a NaN; its own `except` logs
and goes on to the epoch barrier, while the other ranks wait in the all_reduce it skipped."""
import logging

import torch
import torch.distributed as dist

log = logging.getLogger(__name__)


def reduce_epoch_metrics(metrics: torch.Tensor, epoch: int) -> None:
    rank = dist.get_rank()
    try:
        if rank == 0 and torch.isnan(metrics).any():
            raise ValueError(f"NaN metrics at epoch {epoch}")  # expect: RC102
        dist.all_reduce(metrics)
    except ValueError as exc:  # expect: RC105
        log.warning("metrics not reduced: %s", exc)
    dist.barrier()
