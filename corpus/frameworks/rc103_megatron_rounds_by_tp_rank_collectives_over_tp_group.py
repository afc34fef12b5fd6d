"""Megatron: the number of validation rounds depends on the tensor-parallel rank (only the first
one holds the iterators), and the loop all-reduces over the tensor-parallel group, whose members
hold different tensor-parallel ranks: the first one loops while the others have left.
"""
import torch
import torch.distributed as dist
from megatron.core import mpu


def evaluate(model, iterators):
    if mpu.get_tensor_model_parallel_rank() == 0:
        steps = len(iterators)
    else:
        steps = 0
    for step in range(steps):  # expect: RC103
        total = model(next(iterators[step])).sum()
        dist.all_reduce(total, group=mpu.get_tensor_model_parallel_group())
