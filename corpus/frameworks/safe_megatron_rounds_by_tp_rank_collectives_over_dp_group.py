"""Megatron: only the first tensor-parallel rank holds the validation iterators, so how many
validation rounds a rank runs depends on its tensor-parallel rank; every collective in the loop
runs over the data-parallel group, whose members all share that rank, so within each group the
ranks loop alike: no RC103. Look-alike of rc103_megatron_rounds_by_tp_rank_collectives_over_tp_group.
"""
import torch
import torch.distributed as dist
from megatron.core import mpu


def evaluate(model, iterators):
    if mpu.get_tensor_model_parallel_rank() == 0:
        steps = len(iterators)
    else:
        steps = 0
    for step in range(steps):
        total = model(next(iterators[step])).sum()
        dist.all_reduce(total, group=mpu.get_data_parallel_group())
