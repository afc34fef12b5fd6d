"""Experts split over the ranks with the remainder going to the first ranks: a rank's number of
local experts depends on its rank, and the list of gradient buffers built by repeating a display
that many times (`[buf] * n`) is as long. The all-reduce per buffer then runs a different number
of times on each rank.
"""
import torch
import torch.distributed as dist


def reduce_expert_grads(num_experts, hidden):
    world = dist.get_world_size()
    rank = dist.get_rank()
    local_experts = num_experts // world + (1 if rank < num_experts % world else 0)
    grads = [torch.zeros(hidden)] * local_experts
    for grad in grads:  # expect: RC103
        dist.all_reduce(grad)
    return grads
