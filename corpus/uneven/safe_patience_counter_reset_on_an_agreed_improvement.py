"""The look-alike: every rank validates its share, the losses are all-reduced, and every rank
resets the patience counter on the same agreed improvement, so the loop ends on the same round
everywhere."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def validate(model, batches) -> torch.Tensor:
    with torch.no_grad():
        total = sum(model(x).mean() for x in batches)
    dist.all_reduce(total)
    return total


def train(model, optimizer, train_batches, val_batches, patience: int) -> None:
    ddp = DDP(model)
    since_best, best = 0, float("inf")
    while since_best < patience:
        for x in train_batches:
            ddp(x).mean().backward()
            optimizer.step()
            optimizer.zero_grad()
        since_best += 1
        val = validate(model, val_batches).item()
        if val < best:
            best, since_best = val, 0
