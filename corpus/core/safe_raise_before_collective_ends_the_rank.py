"""The look-alike: rank 0 raises on a NaN and nothing catches it; the rank dies, torchrun tears
the job down (RC108, off by default, for launchers that do not)."""
import torch
import torch.distributed as dist


def reduce_epoch_metrics(metrics: torch.Tensor, epoch: int) -> None:
    rank = dist.get_rank()
    if rank == 0 and torch.isnan(metrics).any():
        raise ValueError(f"NaN metrics at epoch {epoch}")
    dist.all_reduce(metrics)
    dist.barrier()
