"""Evaluation on rank 0 of `ema if ema is not None else model.module`: the plain module under the
DDP wrapper has no collective in its forward, so rank 0 evaluates alone."""
import copy

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def evaluate(model, ema, loader):
    net = ema if ema is not None else model.module
    net.eval()
    total = 0.0
    with torch.no_grad():
        for x, y in loader:
            total += torch.nn.functional.mse_loss(net(x), y).item()
    model.train()
    return total


def train(module, use_ema, train_loader, val_loader, optimizer, steps, every):
    # The EMA copy lives on rank 0 only, and not at all when it is switched off.
    ema = copy.deepcopy(module) if dist.get_rank() == 0 and use_ema else None
    model = DDP(module)
    for step, (x, y) in enumerate(train_loader):
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if dist.get_rank() == 0 and step % every == 0:
            evaluate(model, ema, val_loader)
        if step == steps:
            break
