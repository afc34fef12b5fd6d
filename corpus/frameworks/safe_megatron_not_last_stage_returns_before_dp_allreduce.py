"""The stages before the last return early; the last stage averages its loss over the
data-parallel group. A data-parallel group lies within one stage: either all of it returns or
none of it does."""
import torch
from megatron.core import mpu


def average_loss_across_data_parallel(loss: torch.Tensor):
    if not mpu.is_pipeline_last_stage():
        return None
    averaged = loss.clone().detach().view(1)
    torch.distributed.all_reduce(averaged, group=mpu.get_data_parallel_group())
    return averaged / torch.distributed.get_world_size(group=mpu.get_data_parallel_group())
