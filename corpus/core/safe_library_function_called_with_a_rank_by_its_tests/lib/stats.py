"""A library helper that reduces a metric unless told to skip it."""
import torch
import torch.distributed as dist


def reduce_metric(value: torch.Tensor, skip: bool = False) -> torch.Tensor:
    if skip:
        return value
    dist.all_reduce(value)
    return value


def train_step(model, batch) -> torch.Tensor:
    loss = model(batch).sum()
    loss.backward()
    return reduce_metric(loss.detach())
