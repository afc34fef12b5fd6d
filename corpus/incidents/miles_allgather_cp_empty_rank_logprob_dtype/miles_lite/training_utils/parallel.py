"""Process groups of the actor (trimmed): a context-parallel group and a tensor-parallel group."""
from dataclasses import dataclass

import torch.distributed as dist


@dataclass
class GroupInfo:
    group: object
    rank: int
    size: int


@dataclass
class ParallelState:
    dp: GroupInfo
    cp: GroupInfo
    tp: GroupInfo


_PARALLEL_STATE = None


def init_parallel_state(context_parallel_size: int) -> ParallelState:
    """Consecutive ranks form a CP group; TP is 1 in this trimmed actor."""
    global _PARALLEL_STATE
    world_size, rank = dist.get_world_size(), dist.get_rank()
    assert world_size % context_parallel_size == 0
    cp_group = dp_group = tp_group = None
    for start in range(0, world_size, context_parallel_size):
        ranks = list(range(start, start + context_parallel_size))
        group = dist.new_group(ranks)
        if rank in ranks:
            cp_group = group
    for offset in range(context_parallel_size):
        ranks = list(range(offset, world_size, context_parallel_size))
        group = dist.new_group(ranks)
        if rank in ranks:
            dp_group = group
    for r in range(world_size):
        group = dist.new_group([r])
        if r == rank:
            tp_group = group
    _PARALLEL_STATE = ParallelState(
        dp=GroupInfo(dp_group, rank // context_parallel_size, world_size // context_parallel_size),
        cp=GroupInfo(cp_group, rank % context_parallel_size, context_parallel_size),
        tp=GroupInfo(tp_group, 0, 1),
    )
    return _PARALLEL_STATE


def get_parallel_state() -> ParallelState:
    assert _PARALLEL_STATE is not None, "call init_parallel_state() first"
    return _PARALLEL_STATE
