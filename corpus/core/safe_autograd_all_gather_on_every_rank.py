"""The look-alike of rc101_autograd_all_gather_in_rank_zero_validation.py (MedARC's fix, in the
form of validating on every rank): each rank computes the loss on its validation batch, gathering
the targets of every rank, and only the printing is rank 0's."""
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
    for voxel, target in val_loader:
        loss = soft_clip_loss(model(voxel), target, distributed=distributed)
        if LOCAL_RANK == 0:
            print(loss.item())
    dist.barrier()
