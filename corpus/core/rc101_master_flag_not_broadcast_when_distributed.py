"""The buggy sibling of safe_master_flag_broadcast_when_distributed: the master broadcasts where to
resume from but not whether the checkpoint is sharded, so only the master (which found the
directory) enters the sharded load's barrier."""
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
    if is_sharded:
        dist.barrier()  # expect: RC101
    return resume_from
