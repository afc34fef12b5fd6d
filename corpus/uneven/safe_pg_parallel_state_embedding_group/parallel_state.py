"""A tiny Megatron-like parallel state: the embedding group and a membership test for it, set up on every rank."""
import torch.distributed as dist

_EMBEDDING_GROUP = None
_EMBEDDING_RANKS = None


def initialize_model_parallel() -> None:
    global _EMBEDDING_GROUP, _EMBEDDING_RANKS
    world_size = dist.get_world_size()
    _EMBEDDING_RANKS = [0, world_size - 1]
    _EMBEDDING_GROUP = dist.new_group(_EMBEDDING_RANKS)


def is_rank_in_embedding_group() -> bool:
    return dist.get_rank() in _EMBEDDING_RANKS


def get_embedding_group():
    return _EMBEDDING_GROUP
