"""Megatron-LM v1's parallel state, as gpt-neox vendors it: the model-parallel group is the
tensor-parallel one."""
from datetime import timedelta

import torch

_MODEL_PARALLEL_GROUP = None
_DATA_PARALLEL_GROUP = None


def initialize_model_parallel(model_parallel_size):
    global _MODEL_PARALLEL_GROUP, _DATA_PARALLEL_GROUP
    world_size = torch.distributed.get_world_size()
    rank = torch.distributed.get_rank()
    for i in range(model_parallel_size):
        group = torch.distributed.new_group(range(i, world_size, model_parallel_size), timeout=timedelta(minutes=10))
        if i == rank % model_parallel_size:
            _DATA_PARALLEL_GROUP = group
    for i in range(world_size // model_parallel_size):
        group = torch.distributed.new_group(range(i * model_parallel_size, (i + 1) * model_parallel_size), timeout=timedelta(minutes=10))
        if i == rank // model_parallel_size:
            _MODEL_PARALLEL_GROUP = group


def get_model_parallel_group():
    return _MODEL_PARALLEL_GROUP


def get_data_parallel_group():
    return _DATA_PARALLEL_GROUP


def get_model_parallel_world_size():
    return torch.distributed.get_world_size(group=get_model_parallel_group())


def get_model_parallel_rank():
    return torch.distributed.get_rank(group=get_model_parallel_group())


def get_data_parallel_rank():
    return torch.distributed.get_rank(group=get_data_parallel_group())


def get_model_parallel_src_rank():
    """The global rank of local rank zero of this rank's model-parallel group."""
    global_rank = torch.distributed.get_rank()
    local_world_size = get_model_parallel_world_size()
    return (global_rank // local_world_size) * local_world_size
