"""verl's Megatron checkpoint loader: the first data-parallel replica reads the full state dict and
broadcasts each shard to its model-parallel group through nested helpers that read the enclosing
function's `mp_group`. The model-parallel group holds the ranks of one data-parallel replica, so
`if dp_rank == 0:` is taken by whole groups."""
import torch
import torch.distributed as dist
from megatron.core import mpu


def load_state_dict_to_megatron(state_dict, wrapped_models, config):
    mp_group = mpu.get_model_parallel_group()
    dp_rank = mpu.get_data_parallel_rank()
    tp_rank = mpu.get_tensor_model_parallel_rank()
    tp_size = mpu.get_tensor_model_parallel_world_size()

    def _broadcast_tensor(tensor, name):
        nonlocal mp_group
        obj_list = [state_dict[name].shape if torch.distributed.get_rank() == 0 else None]
        dist.broadcast_object_list(obj_list, src=0, group=mp_group)
        buffer = torch.empty(obj_list[0], dtype=config.params_dtype)
        if torch.distributed.get_rank() == 0:
            buffer.copy_(state_dict[name])
        dist.broadcast(buffer, src=0, group=mp_group)
        if tensor is not None:
            tensor.data.copy_(buffer.chunk(tp_size)[tp_rank])

    if dp_rank == 0:
        for name, param in wrapped_models[0].named_parameters():
            _broadcast_tensor(param, name)
    torch.cuda.synchronize()
