"""Distributed setup of the trainer (as open_clip_train/distributed.py): the rank lives on the
parsed `args` namespace, set by `init_distributed_device`, and is read back through `is_master`."""
import os

import torch
import torch.distributed as dist


def is_global_master(args):
    return args.rank == 0


def is_local_master(args):
    return args.local_rank == 0


def is_master(args, local=False):
    return is_local_master(args) if local else is_global_master(args)


def is_using_distributed():
    if "WORLD_SIZE" in os.environ:
        return int(os.environ["WORLD_SIZE"]) > 1
    if "SLURM_NTASKS" in os.environ:
        return int(os.environ["SLURM_NTASKS"]) > 1
    return False


def init_distributed_device(args):
    args.distributed = False
    args.world_size = 1
    args.rank = 0
    args.local_rank = 0
    if is_using_distributed():
        dist.init_process_group(backend=args.dist_backend, init_method=args.dist_url)
        args.local_rank = int(os.environ.get("LOCAL_RANK", os.environ.get("SLURM_LOCALID", 0)))
        args.rank = dist.get_rank()
        args.world_size = dist.get_world_size()
        args.distributed = True
    if torch.cuda.is_available():
        device = f"cuda:{args.local_rank}" if args.distributed else "cuda:0"
        torch.cuda.set_device(device)
    else:
        device = "cpu"
    args.device = device
    return torch.device(device)


def broadcast_object(args, obj, src=0):
    objects = [obj if args.rank == src else None]
    dist.broadcast_object_list(objects, src=src)
    return objects[0]
