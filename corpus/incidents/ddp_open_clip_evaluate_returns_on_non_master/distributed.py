"""Distributed helpers of an open_clip-style training package."""
import torch.distributed as dist


def is_global_master(args) -> bool:
    return args.rank == 0


def is_local_master(args) -> bool:
    return args.local_rank == 0


def is_master(args, local: bool = False) -> bool:
    return is_local_master(args) if local else is_global_master(args)


def init_distributed_device(args):
    args.distributed = dist.is_available() and args.world_size > 1
    if args.distributed:
        dist.init_process_group(backend=args.dist_backend, init_method=args.dist_url)
        args.rank = dist.get_rank()
    return args
