"""Look-alikes of RC201 that set the timeout: positionally, by keyword, from configuration, and
through `**kwargs` a caller fills."""
import datetime

import torch.distributed as dist


def setup(args, **init_kwargs):
    dist.init_process_group("nccl", None, datetime.timedelta(minutes=5))
    gloo = dist.new_group(backend="gloo", timeout=datetime.timedelta(seconds=args.timeout))
    dist.new_group(list(range(2)), args.group_timeout)
    dist.split_group(split_ranks=[[0, 1], [2, 3]], timeout=datetime.timedelta(minutes=5))
    dist.init_process_group(backend="gloo", **init_kwargs)
    return gloo


def simulate(rank, world_size):
    # a fake group waits on nobody: it simulates a world size for tracing
    dist.init_process_group("fake", rank=rank, world_size=world_size)


def alone(rank):
    # groups of one process wait on nobody
    dist.init_process_group("gloo", world_size=1, rank=0)
    return dist.new_group(ranks=[rank])
