"""Streaming metrics of an ms-swift-based SFT trainer: each rank accumulates locally and
`compute()` sums state and count over the ranks with one all-reduce.

Thread: https://github.com/modelscope/ms-swift/issues/9550 ("Potential dtype inconsistency in distributed metric reduction"); fixed by https://github.com/modelscope/ms-swift/pull/9551 ("pin MeanMetric all_reduce tensor to float32 to avoid cross-rank dtype mismatch")
Project: modelscope/ms-swift (swift/metrics/utils.py `MeanMetric`, swift/metrics/acc.py
`compute_acc`, the trainer mixin that updates and logs them)
What hung: issue #9550, a text + audio model trained with distributed SFT: "I encountered a hang
during metric synchronization. After adding debug logs, I found that different ranks were creating
reduction tensors with different dtypes immediately before `dist.all_reduce()`". The PR:
"`MeanMetric.compute()` builds the all-reduce tensor with an inferred dtype [...]. In
sequence-level accuracy, `compute_acc()` appends `np.all(...)` (a `numpy.bool_`). Accumulating that
into `self.state` promotes it from a python `float` to `numpy.float64` on the ranks that take that
path. `torch.tensor([...])` then infers float64 on those ranks but float32 on ranks where
`self.state` stayed a python float. The ranks enter `dist.all_reduce()` with mismatched dtypes and
the collective hangs."
Fix (the PR, merged; its title says float32, its body pins float64): build the tensor with an
explicit `dtype=torch.float64` on every rank ("float64 also keeps `count` exact").
Expected rankcheck finding: RC104 on the `dist.all_reduce` in `MeanMetric.compute`, whose tensor's
dtype depends on the Python/numpy type this rank's updates left in `self.state`.
(Inferred: which ranks keep a Python float. Here `compute_acc` returns {} for audio batches, whose
logits also cover the encoded audio frames, so a rank whose batches in the logging window were all
audio never updates the metric after `reset()`; the thread does not say which path that rank took.)
"""
from abc import ABC, abstractmethod

import numpy as np
import torch
import torch.distributed as dist


class Metric(ABC):
    def __init__(self):
        self._default = {}

    def add_state(self, name: str, default):
        self._default[name] = default
        setattr(self, name, default)

    def reset(self):
        for k, v in self._default.items():
            setattr(self, k, v)

    @abstractmethod
    def update(self, *args, **kwargs):
        pass

    @abstractmethod
    def compute(self):
        pass


class MeanMetric(Metric):
    def __init__(self, nan_value=0, device=None, group=None):
        super().__init__()
        self.nan_value = nan_value
        self.add_state("state", default=0.)
        self.add_state("count", default=0)
        self.device = device if device is not None else torch.device("cuda", torch.cuda.current_device())
        self.group = group

    def update(self, state):
        if isinstance(state, (torch.Tensor, np.ndarray)):
            if state.ndim == 0:
                count, state = 1, state.item()
            else:
                count, state = state.shape[0], state.sum().item()
        elif isinstance(state, (list, tuple)):
            count, state = len(state), sum(state)
        else:
            count = 1
        self.state += state
        self.count += count

    def compute(self):
        if dist.is_initialized():
            tensor = torch.tensor([self.state, self.count], device=self.device)
            dist.all_reduce(tensor, op=dist.ReduceOp.SUM, group=self.group)  # expect: RC104
            self.state, self.count = tensor[0].item(), int(tensor[1].item())
        value = self.nan_value if self.count == 0 else self.state / self.count
        return {"value": value}
