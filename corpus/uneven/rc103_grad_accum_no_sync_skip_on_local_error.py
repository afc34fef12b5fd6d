"""Gradient accumulation with `model.no_sync()` on the steps between boundaries: the loss is
computed through the task object that holds the same DDP model, and a batch whose local samples
are all filtered out is skipped with `continue` before its backward. Only a wrapper with a
gradient all-reduce has `no_sync`, so the backward the other ranks run syncs, and the rank that
skipped it leaves them waiting (NVIDIA-NeMo/Automodel#2468)."""
import contextlib

import torch
import torch.distributed as dist


class EmptyBatchError(RuntimeError):
    pass


class Task:
    def __init__(self, encoder):
        self.encoder = encoder

    def loss(self, batch):
        keep = batch["mask"].sum(-1) > 0
        if not keep.any():
            raise EmptyBatchError("every sample of this micro-batch is masked out")
        return self.encoder(batch["input_ids"][keep]).mean()


def train(task, model, optimizer, loader, accumulation: int):
    for step, batch in enumerate(loader):
        boundary = (step + 1) % accumulation == 0
        sync = contextlib.nullcontext() if boundary else model.no_sync()
        try:
            loss = task.loss(batch)
        except EmptyBatchError:
            continue  # expect: RC103
        with sync:
            (loss / accumulation).backward()
        if boundary:
            optimizer.step()
            optimizer.zero_grad()
    dist.barrier()
