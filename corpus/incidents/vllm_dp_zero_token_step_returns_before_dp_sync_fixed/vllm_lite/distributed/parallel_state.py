"""Trimmed vllm/distributed/parallel_state.py: the DP and EP group coordinators."""
from typing import Optional

import torch
import torch.distributed as dist


class GroupCoordinator:
    def __init__(self, ranks, backend="nccl"):
        self.ranks = ranks
        self.world_size = len(ranks)
        self.rank_in_group = ranks.index(dist.get_rank())
        self.device_group = dist.new_group(ranks, backend=backend)
        self.cpu_group = dist.new_group(ranks, backend="gloo")

    def all_reduce(self, tensor):
        dist.all_reduce(tensor, group=self.device_group)
        return tensor

    def all_gather(self, tensor, dim=0):
        out = torch.empty((self.world_size * tensor.shape[0],) + tuple(tensor.shape[1:]),
                          dtype=tensor.dtype, device=tensor.device)
        dist.all_gather_into_tensor(out, tensor, group=self.device_group)
        return out

    def reduce_scatter(self, tensor, dim=0):
        out = torch.empty((tensor.shape[0] // self.world_size,) + tuple(tensor.shape[1:]),
                          dtype=tensor.dtype, device=tensor.device)
        dist.reduce_scatter_tensor(out, tensor, group=self.device_group)
        return out


_DP: Optional[GroupCoordinator] = None
_EP: Optional[GroupCoordinator] = None


def initialize_model_parallel(parallel_config):
    global _DP, _EP
    world = dist.get_world_size()
    _DP = GroupCoordinator(list(range(world)))
    _EP = GroupCoordinator(list(range(world))) if parallel_config.enable_expert_parallel else None


def get_dp_group() -> GroupCoordinator:
    assert _DP is not None, "data parallel group is not initialized"
    return _DP


def get_ep_group() -> GroupCoordinator:
    assert _EP is not None, "expert parallel group is not initialized"
    return _EP


def has_kv_transfer_group() -> bool:
    return False
