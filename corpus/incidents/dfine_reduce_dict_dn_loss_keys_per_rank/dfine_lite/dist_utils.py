"""Distributed helpers (D-FINE src/misc/dist_utils.py, trimmed)."""

import os

import torch
import torch.distributed
from torch.nn.parallel import DistributedDataParallel as DDP


def setup_distributed():
    if "RANK" not in os.environ:
        return False
    torch.distributed.init_process_group(backend="nccl", init_method="env://")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    torch.distributed.barrier()
    return True


def is_dist_available_and_initialized():
    return torch.distributed.is_available() and torch.distributed.is_initialized()


def get_world_size():
    return torch.distributed.get_world_size() if is_dist_available_and_initialized() else 1


def get_rank():
    return torch.distributed.get_rank() if is_dist_available_and_initialized() else 0


def is_main_process():
    return get_rank() == 0


def save_on_master(obj, path):
    if is_main_process():
        torch.save(obj, path)


def warp_model(model, sync_bn=False, find_unused_parameters=False):
    if is_dist_available_and_initialized():
        rank = get_rank()
        if sync_bn:
            model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = DDP(model, device_ids=[torch.cuda.current_device()], output_device=torch.cuda.current_device(),
                    find_unused_parameters=find_unused_parameters)
        print(f"[rank {rank}] model wrapped in DDP")
    return model


def reduce_dict(data, avg=True):
    """
    Args
        data dict: input, {k: v, ...}
        avg bool: true
    """
    world_size = get_world_size()
    if world_size < 2:
        return data

    with torch.no_grad():
        keys, values = [], []
        for k in sorted(data.keys()):
            keys.append(k)
            values.append(data[k])

        values = torch.stack(values, dim=0)
        torch.distributed.all_reduce(values)  # expect: RC104

        if avg is True:
            values /= world_size

        return {k: v for k, v in zip(keys, values)}
