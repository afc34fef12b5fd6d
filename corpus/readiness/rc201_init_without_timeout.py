"""A DDP script that creates its groups with the default timeouts: the default group (10 minutes
for NCCL) and side groups, which do not inherit the default group's timeout either way."""
import os

import torch
import torch.distributed as dist
from torch.distributed import new_group


def setup():
    dist.init_process_group(backend="nccl")  # expect: RC201
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    evens = new_group(ranks=list(range(0, dist.get_world_size(), 2)))  # expect: RC201
    subgroup, _ = dist.new_subgroups(group_size=2, timeout=None)  # expect: RC201
    # split_group defaults its timeout from the backend, not from the parent group
    tp_group = dist.split_group(split_ranks=[[0, 1], [2, 3]])  # expect: RC201
    return evens, subgroup, tp_group


def train():
    evens, subgroup, tp_group = setup()
    dist.all_reduce(torch.ones(1, device="cuda"), group=evens)
