"""Trimmed colossalai/amp/naive_amp/_utils.py."""
from typing import List

from torch import Tensor


def has_inf_or_nan(tensor: Tensor) -> bool:
    try:
        total = float(tensor.float().sum())
    except RuntimeError as err:
        if "value cannot be converted" not in err.args[0]:
            raise
        return True
    return total in (float("inf"), -float("inf")) or total != total


def zero_grad_by_list(tensors: List[Tensor], set_to_none: bool = True) -> None:
    for t in tensors:
        if t.grad is None:
            continue
        if set_to_none:
            t.grad = None
        else:
            t.grad.detach_()
            t.grad.zero_()
