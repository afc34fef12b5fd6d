"""The loss lives on the last stage, but only tensor-parallel rank 0 of it takes part in the
tensor-parallel all_reduce: its tensor-parallel peers, on the same stage, never join."""
import torch
from megatron.core import mpu


def log_loss(loss: torch.Tensor) -> None:
    if mpu.is_pipeline_last_stage() and mpu.get_tensor_model_parallel_rank() == 0:
        value = loss.detach().clone()
        torch.distributed.all_reduce(value, group=mpu.get_tensor_model_parallel_group())  # expect: RC101
        print(f"loss {value.item():.4f}")
