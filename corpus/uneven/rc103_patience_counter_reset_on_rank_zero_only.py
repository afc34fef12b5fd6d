"""Early stopping with a patience counter that only rank 0 resets, after validating on its own:
the loop's test reads the counter each round, so once rank 0 has seen an improvement it goes on
training while the other ranks have run out of patience and left the loop (pytext#585's shape)."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def validate(model, batches) -> float:
    with torch.no_grad():
        return sum(float(model(x).mean()) for x in batches)


def train(model, optimizer, train_batches, val_batches, patience: int) -> None:
    ddp = DDP(model)
    rank = dist.get_rank()
    since_best, best = 0, float("inf")
    while since_best < patience:  # expect: RC103
        for x in train_batches:
            ddp(x).mean().backward()
            optimizer.step()
            optimizer.zero_grad()
        since_best += 1
        if rank == 0:
            val = validate(model, val_batches)
            if val < best:
                best, since_best = val, 0
