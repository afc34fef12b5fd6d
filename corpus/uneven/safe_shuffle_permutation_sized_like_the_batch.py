"""Shuffling-BN across processes (MoCo/SlowFast): rank 0 draws a permutation as long as a buffer
made like this rank's batch and broadcasts it. The loader gives every rank batches of one size,
so `ones_like(clips)` has as many rows everywhere and the broadcast tensors agree."""
import torch
import torch.distributed as dist


def shuffled_order(clips: torch.Tensor) -> torch.Tensor:
    rows = torch.ones_like(clips).shape[0]
    order = torch.randperm(rows)
    dist.broadcast(order, src=0)
    return order


def train(model, optimizer, train_loader):
    for step, (clips, labels) in enumerate(train_loader):
        order = shuffled_order(clips)
        loss = torch.nn.functional.cross_entropy(model(clips[order]), labels[order])
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
