"""Metric base classes (pytorch_lightning/metrics/metric.py, 0.9.x)."""
from abc import ABC, abstractmethod
from typing import Any, Optional

import torch
import torch.nn as nn

from .converters import apply_to_collection, tensor_metric


class Metric(nn.Module, ABC):
    def __init__(self, name: str):
        super().__init__()
        self.name = name
        self._dtype = torch.get_default_dtype()
        self._device = torch.device("cpu")

    @abstractmethod
    def forward(self, *args, **kwargs) -> torch.Tensor:
        raise NotImplementedError


class TensorMetric(Metric):
    """A metric whose inputs and outputs are tensors; the output of `forward` is reduced over the
    DDP processes on every call, then passed through `compute`."""

    def __init__(self, name: str, reduce_group: Optional[Any] = None, reduce_op: Optional[Any] = None):
        super().__init__(name)
        self._orig_call = tensor_metric(group=reduce_group, reduce_op=reduce_op)(super().__call__)

    def __call__(self, *args, **kwargs) -> torch.Tensor:
        def _to_device_dtype(x: torch.Tensor) -> torch.Tensor:
            return x.to(device=self._device, dtype=self._dtype, non_blocking=True)

        synced = apply_to_collection(self._orig_call(*args, **kwargs), torch.Tensor, _to_device_dtype)
        return self.compute(synced)

    def compute(self, output: Any) -> Any:
        """Post-processing of the synced output (identity by default)."""
        return output

    def _apply(self, fn):
        super()._apply(fn)
        probe = fn(torch.zeros(1, dtype=self._dtype, device=self._device))
        self._device, self._dtype = probe.device, probe.dtype
        return self
