"""Safe twin of swift_mean_metric_all_reduce_dtype_per_rank: as in the merged fix of ms-swift#9551,
`MeanMetric.compute` builds the all-reduce tensor with an explicit float64 dtype, so every rank
reduces the same dtype whatever Python or numpy type its updates left in `self.state`.

Thread: https://github.com/modelscope/ms-swift/issues/9550 (fix: https://github.com/modelscope/ms-swift/pull/9551)
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
            tensor = torch.tensor([self.state, self.count], dtype=torch.float64, device=self.device)
            dist.all_reduce(tensor, op=dist.ReduceOp.SUM, group=self.group)
            self.state, self.count = tensor[0].item(), int(tensor[1].item())
        value = self.nan_value if self.count == 0 else self.state / self.count
        return {"value": value}
