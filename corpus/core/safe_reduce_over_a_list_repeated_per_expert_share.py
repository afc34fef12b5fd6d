"""The look-alike of rc103_reduce_over_a_list_repeated_per_local_expert.py with experts that divide
evenly: the repeated list has `num_experts // world` buffers on every rank, so every rank issues
the same number of all-reduces.
"""
import torch
import torch.distributed as dist


def reduce_expert_grads(num_experts, hidden):
    world = dist.get_world_size()
    assert num_experts % world == 0
    grads = [torch.zeros(hidden)] * (num_experts // world)
    for grad in grads:
        dist.all_reduce(grad)
    return grads
