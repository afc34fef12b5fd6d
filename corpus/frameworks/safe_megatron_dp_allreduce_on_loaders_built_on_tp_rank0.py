"""Megatron builds the validation loaders on tensor-parallel rank 0 only (the others receive the
batches by broadcast over the tensor-parallel group). Whether the loaders exist then depends on
the tensor-parallel rank alone, and the data-parallel group's members share it: the all-reduce of
the loaders' lengths over that group is called by whole groups or not at all."""
import torch
from megatron.core import mpu


def build_loaders(args, build_fn):
    valid_loaders = None
    if mpu.get_tensor_model_parallel_rank() == 0:
        valid_loaders = build_fn(args)
    if valid_loaders is not None:
        lengths = torch.tensor([len(dl) for dl in valid_loaders], dtype=torch.long)
        torch.distributed.all_reduce(lengths, op=torch.distributed.ReduceOp.MAX, group=mpu.get_data_parallel_group())
        args.eval_iters = lengths.tolist()
    return valid_loaders
