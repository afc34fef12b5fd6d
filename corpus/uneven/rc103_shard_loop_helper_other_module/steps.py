"""One optimisation step with hand-rolled gradient averaging: every rank must call it the same number of times."""
import torch
import torch.distributed as dist
import torch.nn as nn


def sync_gradients(model: nn.Module) -> None:
    world_size = dist.get_world_size()
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad /= world_size


def train_step(model: nn.Module, opt: torch.optim.Optimizer, x: torch.Tensor, y: torch.Tensor) -> float:
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    sync_gradients(model)
    opt.step()
    return loss.item()
