"""Trimmed colossalai/amp/naive_amp/naive_amp.py: the model is cast to fp16 and the optimizer is
wrapped in FP16Optimizer, which keeps fp32 master weights and a dynamic loss scale."""
import torch.nn as nn
from torch import Tensor
from torch.optim import Optimizer

from ._fp16_optimizer import FP16Optimizer


class NaiveAMPOptimizer:
    def __init__(self, optim: Optimizer, *args, **kwargs):
        self.optim = FP16Optimizer(optim, *args, **kwargs)

    def zero_grad(self, set_to_none: bool = True):
        self.optim.zero_grad(set_to_none=set_to_none)

    def backward(self, loss: Tensor):
        self.optim.backward(loss)

    def step(self):
        return self.optim.step()

    def clip_grad_norm(self, model: nn.Module, max_norm: float):
        # clipping happens inside FP16Optimizer.step, after unscaling
        pass


class NaiveAMPModel(nn.Module):
    def __init__(self, model: nn.Module, output_to_fp32: bool = True):
        super().__init__()
        self.model = model.half()
        self._output_to_fp32 = output_to_fp32

    def forward(self, *args, **kwargs):
        args = [a.half() if hasattr(a, "is_floating_point") and a.is_floating_point() else a for a in args]
        out = self.model(*args, **kwargs)
        if self._output_to_fp32 and hasattr(out, "float"):
            out = out.float()
        return out
