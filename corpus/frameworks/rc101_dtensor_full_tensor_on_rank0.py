"""Saving FSDP2 optimizer state from rank 0 only: `DTensor.full_tensor()` all-gathers the shards from
every rank, so the other ranks never join it. The look-alike materializes on every rank and saves
on one."""
import torch
import torch.distributed as dist
from torch.distributed.tensor import DTensor


def save_moments(optimizer, path):
    if dist.get_rank() == 0:
        for state in optimizer.state.values():
            moment = state["exp_avg_sq"]
            if isinstance(moment, DTensor):
                moment = moment.full_tensor()  # expect: RC101
            torch.save(moment, path)


def save_moments_everywhere(optimizer, path):
    moments = []
    for state in optimizer.state.values():
        moment = state["exp_avg_sq"]
        if isinstance(moment, DTensor):
            moment = moment.full_tensor()
        moments.append(moment)
    if dist.get_rank() == 0:
        torch.save(moments, path)
