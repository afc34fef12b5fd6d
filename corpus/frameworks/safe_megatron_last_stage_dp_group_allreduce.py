"""Only the last pipeline stage has the loss, and it averages it over the data-parallel group.
Every member of a last-stage rank's data-parallel group is itself on the last stage, so the ranks
that call the all_reduce are whole groups: safe (megatron.toml's `uniform_in_group`)."""
import torch
from megatron.core import parallel_state as mpu


def reduce_loss(loss: torch.Tensor):
    if mpu.is_pipeline_last_stage(ignore_virtual=True):
        averaged = loss.clone().detach().view(1)
        torch.distributed.all_reduce(averaged, group=mpu.get_data_parallel_group())
        averaged = averaged / torch.distributed.get_world_size(group=mpu.get_data_parallel_group())
        return averaged
    return None
