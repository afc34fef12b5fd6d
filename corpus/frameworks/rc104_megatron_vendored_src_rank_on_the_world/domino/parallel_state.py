"""A fork's copy of Megatron's parallel_state (DeepSpeed-Domino vendors it this way): the groups
and the source ranks of a tensor x pipeline grid."""
import torch
import torch.distributed as dist

_TENSOR_MODEL_PARALLEL_GROUP = None
_TENSOR_MODEL_PARALLEL_GLOBAL_RANKS = None
_PIPELINE_MODEL_PARALLEL_GROUP = None
_PIPELINE_GLOBAL_RANKS = None


def initialize_model_parallel(tensor_model_parallel_size: int = 1) -> None:
    global _TENSOR_MODEL_PARALLEL_GROUP, _TENSOR_MODEL_PARALLEL_GLOBAL_RANKS
    global _PIPELINE_MODEL_PARALLEL_GROUP, _PIPELINE_GLOBAL_RANKS
    world_size = dist.get_world_size()
    rank = dist.get_rank()
    pipeline_size = world_size // tensor_model_parallel_size
    for i in range(pipeline_size):
        ranks = list(range(i * tensor_model_parallel_size, (i + 1) * tensor_model_parallel_size))
        group = dist.new_group(ranks)
        if rank in ranks:
            _TENSOR_MODEL_PARALLEL_GROUP = group
            _TENSOR_MODEL_PARALLEL_GLOBAL_RANKS = ranks
    for j in range(tensor_model_parallel_size):
        ranks = list(range(j, world_size, tensor_model_parallel_size))
        group = dist.new_group(ranks)
        if rank in ranks:
            _PIPELINE_MODEL_PARALLEL_GROUP = group
            _PIPELINE_GLOBAL_RANKS = ranks


def get_tensor_model_parallel_group():
    return _TENSOR_MODEL_PARALLEL_GROUP


def get_pipeline_model_parallel_group():
    return _PIPELINE_MODEL_PARALLEL_GROUP


def get_tensor_model_parallel_rank():
    return dist.get_rank(group=get_tensor_model_parallel_group())


def get_pipeline_model_parallel_rank():
    return dist.get_rank(group=get_pipeline_model_parallel_group())


def get_pipeline_model_parallel_world_size():
    return dist.get_world_size(group=get_pipeline_model_parallel_group())


def is_pipeline_first_stage() -> bool:
    return get_pipeline_model_parallel_rank() == 0


def is_pipeline_last_stage() -> bool:
    return get_pipeline_model_parallel_rank() == get_pipeline_model_parallel_world_size() - 1


def get_tensor_model_parallel_src_rank() -> int:
    global_rank = dist.get_rank()
    local_world_size = dist.get_world_size(group=get_tensor_model_parallel_group())
    return (global_rank // local_world_size) * local_world_size
