"""open_clip-shaped resume: the master decides where to resume from and whether the checkpoint is
sharded, and broadcasts both when the job is distributed (`args.distributed`, set once from the
world size). Without other processes there is nothing to broadcast to: the master's values are
everyone's. The sharded load that follows is taken by every rank or none."""
import os

import torch.distributed as dist


def broadcast_object(args, obj, src=0):
    objects = [obj] if args.rank == src else [None]
    dist.broadcast_object_list(objects, src=src)
    return objects[0]


def resume(args):
    resume_from, is_sharded = None, None
    if args.rank == 0:
        resume_from = os.path.join(args.checkpoint_path, "epoch_latest")
        is_sharded = os.path.isdir(resume_from)
    if args.distributed:
        resume_from = broadcast_object(args, resume_from)
        is_sharded = broadcast_object(args, is_sharded)
    if is_sharded:
        dist.barrier()
    return resume_from
