"""Conversion and DDP-reduction helpers (pytorch_lightning/metrics/converters.py)."""
from functools import wraps
from typing import Any, Callable, Optional

import numpy as np
import torch


def apply_to_collection(data: Any, dtype, function: Callable, *args, **kwargs) -> Any:
    if isinstance(data, dtype):
        return function(data, *args, **kwargs)
    if isinstance(data, dict):
        return type(data)({k: apply_to_collection(v, dtype, function, *args, **kwargs) for k, v in data.items()})
    if isinstance(data, (list, tuple)):
        return type(data)(apply_to_collection(d, dtype, function, *args, **kwargs) for d in data)
    return data


def convert_to_tensor(data: Any, dtype=None, device=None) -> Any:
    if isinstance(data, np.ndarray):
        return torch.from_numpy(data).to(device=device, dtype=dtype)
    if isinstance(data, (int, float)):
        return torch.tensor([data], device=device, dtype=dtype)
    return data


def sync_ddp_if_available(result: torch.Tensor, group: Optional[Any] = None,
                          reduce_op: Optional[torch.distributed.ReduceOp] = None) -> torch.Tensor:
    """Reduce a tensor across the DDP processes (sum by default); a no-op outside DDP."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        if group is None:
            group = torch.distributed.group.WORLD
        if reduce_op is None:
            reduce_op = torch.distributed.ReduceOp.SUM
        # sync all processes before reduction
        torch.distributed.barrier(group=group)
        torch.distributed.all_reduce(result, op=reduce_op, group=group, async_op=False)  # expect: RC104
    return result


def tensor_metric(group: Optional[Any] = None, reduce_op: Optional[Any] = None):
    """Decorate a metric call: convert its inputs and output to tensors and sum the output over DDP."""

    def decorator(func: Callable) -> Callable:
        @wraps(func)
        def wrapped(*args, **kwargs):
            args = apply_to_collection(args, np.ndarray, convert_to_tensor)
            result = func(*args, **kwargs)
            result = apply_to_collection(result, (int, float, np.ndarray), convert_to_tensor)
            return apply_to_collection(result, torch.Tensor, sync_ddp_if_available, group=group,
                                       reduce_op=reduce_op)

        return wrapped

    return decorator
