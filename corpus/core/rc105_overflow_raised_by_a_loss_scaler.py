"""fairseq's fp16 training: the dynamic loss scaler raises OverflowError when the gradient norm
overflows at the minimum scale, and the trainer catches it, drops the step and goes on. The norm
is of the all-reduced gradients, alike on every rank, so every rank raises (or none does) and
they leave the step together: nothing to report. Python raises OverflowError by itself only on a
number too large for a float (a perplexity's `math.exp`), which a training step does not do.

The look-alike raises it on this rank's own loss, before the gradients are reduced: the rank that
overflows drops the step while the others wait in the all-reduce."""
import math

import torch
import torch.distributed as dist


class DynamicLossScaler:
    def __init__(self, scale: float, min_scale: float) -> None:
        self.scale = scale
        self.min_scale = min_scale

    def check_overflow(self, grad_norm: torch.Tensor) -> None:
        if not math.isfinite(grad_norm.item()):
            self.scale /= 2.0
            if self.scale <= self.min_scale:
                raise OverflowError(f"minimum loss scale reached: {self.scale}")


def reduced_norm(params) -> torch.Tensor:
    norm = torch.stack([p.grad.norm() for p in params]).norm()
    dist.all_reduce(norm)
    return norm


def train_step(model, optimizer, scaler: DynamicLossScaler, batch) -> None:
    try:
        loss = model(batch).sum() * scaler.scale
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        scaler.check_overflow(reduced_norm(list(model.parameters())))
        optimizer.step()
    except OverflowError:
        optimizer.zero_grad()
        return
    dist.barrier()


def train_step_checked_before_reduction(model, optimizer, scaler: DynamicLossScaler, batch) -> None:
    try:
        loss = model(batch).sum() * scaler.scale
        if not math.isfinite(loss.item()):
            raise OverflowError("loss overflowed")  # expect: RC102
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        optimizer.step()
    except OverflowError:  # expect: RC105
        optimizer.zero_grad()
        return
    dist.barrier()
