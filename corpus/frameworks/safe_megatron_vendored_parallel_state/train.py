"""With the fork's parallel_state, the tensor-parallel source rank reads the batch and broadcasts it
over its tensor-parallel group, whose members agree on that source; the middle pipeline stages
leave before the broadcast, but a tensor-parallel group lies within one stage, so its members leave
together."""
import torch
import torch.distributed as dist

from domino import parallel_state as mpu


def broadcast_batch(batch, keys):
    if mpu.get_tensor_model_parallel_rank() == 0:
        data = torch.cat([batch[k].flatten() for k in keys])
    else:
        data = torch.empty(64, dtype=torch.int64)
    dist.broadcast(data, mpu.get_tensor_model_parallel_src_rank(), group=mpu.get_tensor_model_parallel_group())
    return data


def get_batch(data_iterator, keys):
    if (not mpu.is_pipeline_first_stage()) and (not mpu.is_pipeline_last_stage()):
        return None
    batch = next(data_iterator) if mpu.get_tensor_model_parallel_rank() == 0 else None
    return broadcast_batch(batch, keys)


def train(data_iterator, steps: int) -> None:
    dist.init_process_group("gloo")
    mpu.initialize_model_parallel(2)
    for _ in range(steps):
        get_batch(data_iterator, ["tokens", "labels"])
