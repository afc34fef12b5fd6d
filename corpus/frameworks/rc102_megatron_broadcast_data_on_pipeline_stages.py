"""Megatron's get_batch: middle pipeline stages load no data and return before
tensor_parallel.broadcast_data, which runs on the tensor-parallel group (its default). Every
member of a tensor-parallel group is on the same pipeline stage, so the whole group returns or
the whole group broadcasts. Returning on the tensor-parallel rank instead leaves the source rank
alone in the broadcast."""
import torch
from megatron.core import mpu, tensor_parallel


def get_batch(data_iterator):
    if not mpu.is_pipeline_first_stage() and not mpu.is_pipeline_last_stage():
        return None
    data = next(data_iterator) if mpu.get_tensor_model_parallel_rank() == 0 else None
    return tensor_parallel.broadcast_data(["tokens"], data, torch.int64)


def get_batch_on_the_source_only(data_iterator):
    if mpu.get_tensor_model_parallel_rank() != 0:
        return None  # expect: RC102
    data = next(data_iterator)
    return tensor_parallel.broadcast_data(["tokens"], data, torch.int64)
