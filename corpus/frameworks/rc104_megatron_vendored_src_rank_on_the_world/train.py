"""The look-alike: the same broadcast from the tensor-parallel source rank, but over the default
group: each tensor-parallel group names its own source, so the ranks of the world disagree on the
root."""
import torch
import torch.distributed as dist

from domino import parallel_state as mpu


def broadcast_batch(batch, keys):
    if mpu.get_tensor_model_parallel_rank() == 0:
        data = torch.cat([batch[k].flatten() for k in keys])
    else:
        data = torch.empty(64, dtype=torch.int64)
    dist.broadcast(data, mpu.get_tensor_model_parallel_src_rank())  # expect: RC104
    return data


def train(data_iterator, steps: int) -> None:
    dist.init_process_group("gloo")
    mpu.initialize_model_parallel(2)
    for _ in range(steps):
        batch = next(data_iterator) if mpu.get_tensor_model_parallel_rank() == 0 else None
        broadcast_batch(batch, ["tokens", "labels"])
