"""Distributed setup used by the solver: process group from torchrun's environment, DDP wrapping."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def setup_distributed(seed=0):
    if "RANK" not in os.environ:
        return False
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    torch.manual_seed(seed + dist.get_rank())
    return True


def is_dist_available_and_initialized():
    return dist.is_available() and dist.is_initialized()


def get_rank():
    return dist.get_rank() if is_dist_available_and_initialized() else 0


def get_world_size():
    return dist.get_world_size() if is_dist_available_and_initialized() else 1


def warp_model(model, sync_bn=False, find_unused_parameters=False):
    """Wrap for DDP: the constructor broadcasts rank 0's parameters and buffers to every rank."""
    if is_dist_available_and_initialized():
        if sync_bn:
            model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = DDP(model, device_ids=[torch.cuda.current_device()], find_unused_parameters=find_unused_parameters)
    return model


def reduce_dict(data, avg=True):
    if get_world_size() < 2:
        return data
    with torch.no_grad():
        keys = sorted(data.keys())
        values = torch.stack([data[k] for k in keys], 0)
        dist.all_reduce(values)
        if avg:
            values /= get_world_size()
        return dict(zip(keys, values))
