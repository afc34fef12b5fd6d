"""Distributed helpers of the trainer (as transformers.trainer_utils in 3.x)."""
import torch
import torch.distributed as dist

PREFIX_CHECKPOINT_DIR = "checkpoint"


def distributed_broadcast_scalars(scalars, num_total_examples=None):
    """All-gather a list of Python scalars from every process and concatenate them."""
    tensorized_scalar = torch.tensor(scalars, dtype=torch.float64).cuda()
    output_tensors = [tensorized_scalar.clone() for _ in range(dist.get_world_size())]
    dist.all_gather(output_tensors, tensorized_scalar)
    concat = torch.cat(output_tensors, dim=0)
    if num_total_examples is not None:
        concat = concat[:num_total_examples]
    return concat
