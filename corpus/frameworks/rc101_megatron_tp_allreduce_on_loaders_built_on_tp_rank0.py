"""The look-alike of safe_megatron_dp_allreduce_on_loaders_built_on_tp_rank0.py: the loaders exist
on tensor-parallel rank 0 only, and the lengths are all-reduced over the tensor-parallel group,
whose other members (TP ranks 1, 2, ...) have no loaders and never join."""
import torch
from megatron.core import mpu


def build_loaders(args, build_fn):
    valid_loaders = None
    if mpu.get_tensor_model_parallel_rank() == 0:
        valid_loaders = build_fn(args)
    if valid_loaders is not None:
        lengths = torch.tensor([len(dl) for dl in valid_loaders], dtype=torch.long)
        torch.distributed.all_reduce(lengths, op=torch.distributed.ReduceOp.MAX, group=mpu.get_tensor_model_parallel_group())  # expect: RC101
        args.eval_iters = lengths.tolist()
    return valid_loaders
