"""Model and data parallel groups, laid out tensor-parallel first: the members of a tensor-parallel
group are consecutive ranks inside one pipeline stage."""
import torch

_TENSOR_MODEL_PARALLEL_GROUP = None
_PIPELINE_MODEL_PARALLEL_GROUP = None


def initialize_model_parallel(tensor_model_parallel_size=1, pipeline_model_parallel_size=1):
    global _TENSOR_MODEL_PARALLEL_GROUP, _PIPELINE_MODEL_PARALLEL_GROUP
    world_size = torch.distributed.get_world_size()
    rank = torch.distributed.get_rank()
    for i in range(world_size // tensor_model_parallel_size):
        ranks = range(i * tensor_model_parallel_size, (i + 1) * tensor_model_parallel_size)
        group = torch.distributed.new_group(ranks)
        if rank in ranks:
            _TENSOR_MODEL_PARALLEL_GROUP = group
    stages = world_size // pipeline_model_parallel_size
    for i in range(stages):
        ranks = range(i, world_size, stages)
        group = torch.distributed.new_group(ranks)
        if rank in ranks:
            _PIPELINE_MODEL_PARALLEL_GROUP = group


def get_tensor_model_parallel_group():
    return _TENSOR_MODEL_PARALLEL_GROUP


def get_pipeline_model_parallel_group():
    return _PIPELINE_MODEL_PARALLEL_GROUP


def get_tensor_model_parallel_world_size():
    return torch.distributed.get_world_size(group=get_tensor_model_parallel_group())


def get_tensor_model_parallel_rank():
    return torch.distributed.get_rank(group=get_tensor_model_parallel_group())


def get_pipeline_model_parallel_rank():
    return torch.distributed.get_rank(group=get_pipeline_model_parallel_group())


def is_pipeline_first_stage():
    return get_pipeline_model_parallel_rank() == 0


def is_pipeline_last_stage():
    world = torch.distributed.get_world_size(group=get_pipeline_model_parallel_group())
    return get_pipeline_model_parallel_rank() == world - 1


def get_pipeline_model_parallel_first_rank():
    """The global rank of the first stage of this rank's pipeline group."""
    world = torch.distributed.get_world_size()
    stages = world // torch.distributed.get_world_size(group=get_pipeline_model_parallel_group())
    return torch.distributed.get_rank() % stages
