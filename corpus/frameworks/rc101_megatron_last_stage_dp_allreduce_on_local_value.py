"""The last stage all-reduces over its data-parallel group only when its own sampled dropout draw
says so: the stage test is alike across the group, the draw is not, so some members of the group
call the all_reduce and the others never do."""
import torch
from megatron.core import mpu


def maybe_sync_layer_drop(grads: torch.Tensor, drop_rate: float = 0.1) -> None:
    draw = torch.rand(1)
    if mpu.is_pipeline_last_stage() and draw.item() > drop_rate:
        torch.distributed.all_reduce(grads, group=mpu.get_data_parallel_group())  # expect: RC101
