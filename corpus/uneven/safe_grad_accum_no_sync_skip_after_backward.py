"""Gradient accumulation with `model.no_sync()`: a micro-batch whose local samples are all masked
out still runs its backward (a zero loss keeps the gradient all-reduce in step on every rank);
only the logging that follows is skipped, and nothing after it communicates."""
import contextlib

import torch


def train(task, model, optimizer, loader, accumulation: int, log):
    for step, batch in enumerate(loader):
        boundary = (step + 1) % accumulation == 0
        sync = contextlib.nullcontext() if boundary else model.no_sync()
        keep = batch["mask"].sum(-1) > 0
        loss = task.loss(batch, keep) if keep.any() else torch.zeros((), requires_grad=True)
        with sync:
            (loss / accumulation).backward()
        if boundary:
            optimizer.step()
            optimizer.zero_grad()
        if not keep.any():
            continue
        log(step, loss.item())
