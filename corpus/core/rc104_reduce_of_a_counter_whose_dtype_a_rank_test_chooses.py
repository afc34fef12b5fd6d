"""A metric built as `torch.tensor(1.0 if rank == 0 else 0)`: without a dtype, torch infers float32
from `1.0` on rank 0 and int64 from `0` on the others, and the ranks enter the same reduce with
tensors of different dtypes (speculators#1116 shape).
"""
import torch
import torch.distributed as dist


class MetricsLogger:
    def __init__(self):
        self.rank = dist.get_rank() if dist.is_initialized() else 0

    def step_metrics(self, loss):
        metrics = {"loss": loss.detach().float()}
        metrics["ranks_logging"] = torch.tensor(1.0 if self.rank == 0 else 0, device=loss.device)
        for value in metrics.values():
            dist.reduce(value, dst=0)  # expect: RC104
        return metrics
