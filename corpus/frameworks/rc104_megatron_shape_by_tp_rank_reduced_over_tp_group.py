"""Megatron: a tensor whose length depends on the tensor-parallel rank is all-reduced over the
tensor-parallel group, whose members hold different tensor-parallel ranks: the lengths differ
within the group and the all_reduce mismatches.
"""
import torch
import torch.distributed as dist
from megatron.core import mpu


def max_eval_iters(valid_dataloaders, num_sets: int):
    if mpu.get_tensor_model_parallel_rank() == 0:
        counts = torch.tensor([len(dl) for dl in valid_dataloaders], dtype=torch.long)
    else:
        counts = torch.zeros(num_sets + mpu.get_tensor_model_parallel_rank(), dtype=torch.long)
    dist.all_reduce(counts, op=dist.ReduceOp.MAX, group=mpu.get_tensor_model_parallel_group())  # expect: RC104
    return counts.tolist()
