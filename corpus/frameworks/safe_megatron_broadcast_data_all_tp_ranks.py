"""pretrain_gpt.py's get_batch: only the tensor-parallel source rank reads the iterator (the others
pass data=None), and every tensor-parallel rank calls broadcast_data."""
import torch
from megatron.core import mpu, tensor_parallel


def get_batch(data_iterator):
    keys = ["text"]
    datatype = torch.int64
    if mpu.get_tensor_model_parallel_rank() == 0:
        data = next(data_iterator)
    else:
        data = None
    data_b = tensor_parallel.broadcast_data(keys, data, datatype)
    tokens_ = data_b["text"].long()
    labels = tokens_[:, 1:].contiguous()
    tokens = tokens_[:, :-1].contiguous()
    return tokens, labels
