"""Megatron: the validation loaders are built on the first tensor-parallel rank only, and the
per-set step counts are all-reduced with MAX over the data-parallel group. The tensor's length
depends on the tensor-parallel rank, but every member of a data-parallel group holds the same
tensor-parallel rank, so within the group the lengths agree: no RC104. Look-alike of
rc104_megatron_shape_by_tp_rank_reduced_over_tp_group.
"""
import torch
import torch.distributed as dist
from megatron.core import mpu


def max_eval_iters(valid_dataloaders, num_sets: int):
    if mpu.get_tensor_model_parallel_rank() == 0:
        counts = torch.tensor([len(dl) for dl in valid_dataloaders], dtype=torch.long)
    else:
        counts = torch.zeros(num_sets + mpu.get_tensor_model_parallel_rank(), dtype=torch.long)
    dist.all_reduce(counts, op=dist.ReduceOp.MAX, group=mpu.get_data_parallel_group())
    return counts.tolist()
