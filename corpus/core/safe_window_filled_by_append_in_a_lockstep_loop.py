"""Micro-batches are grouped into windows of `accumulation` by appending one at a time; every rank
iterates a loader of the same length, so every rank's window fills at the same step and all of
them reduce together (OpenRLHF's iter_grad_accum_global_norm has this shape)."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def windows(dataset, accumulation: int):
    loader = DataLoader(dataset, batch_size=4, sampler=DistributedSampler(dataset))
    window = []
    for batch in loader:
        window.append(batch)
        if len(window) == accumulation:
            tokens = torch.tensor([float(len(window))])
            dist.all_reduce(tokens)
            yield window, tokens
            window = []
