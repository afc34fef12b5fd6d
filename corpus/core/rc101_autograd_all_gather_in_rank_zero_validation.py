"""MedARC-shaped contrastive training: the loss gathers the targets of every rank with the
autograd-aware `torch.distributed.nn.all_gather` when the job is distributed, and validation
runs on local rank 0 alone with the same loss, still told the job is distributed: rank 0 waits in
the gather while the others wait at the epoch's barrier. (The look-alike,
safe_autograd_all_gather_on_every_rank.py, validates on every rank.)"""
import os

import torch
import torch.distributed as dist
import torch.distributed.nn
import torch.nn.functional as F

LOCAL_RANK = int(os.environ.get("LOCAL_RANK", 0))


def soft_clip_loss(preds, targs, temp=0.125, distributed=False):
    if distributed:
        all_targs = torch.cat(torch.distributed.nn.all_gather(targs), dim=0)
    else:
        all_targs = targs
    return F.cross_entropy((preds @ all_targs.T) / temp, torch.arange(preds.shape[0]))


def validate(model, val_loader, distributed: bool):
    if LOCAL_RANK == 0:
        for voxel, target in val_loader:
            loss = soft_clip_loss(model(voxel), target, distributed=distributed)  # expect: RC101
            print(loss.item())
    dist.barrier()
