"""Megatron-style get_batch: the tensor-parallel source rank reads the batch and calls
tensor_parallel.broadcast_data inside its branch; the other tensor-parallel ranks, which must
receive the broadcast, never call it."""
import torch
from megatron.core import mpu, tensor_parallel


def get_batch(data_iterator):
    keys = ["text"]
    datatype = torch.int64
    tokens = None
    if mpu.get_tensor_model_parallel_rank() == 0:
        data = next(data_iterator)
        data_b = tensor_parallel.broadcast_data(keys, data, datatype)  # expect: RC101
        tokens = data_b["text"].long()
    labels = tokens[:, 1:].contiguous()
    tokens = tokens[:, :-1].contiguous()
    return tokens, labels
