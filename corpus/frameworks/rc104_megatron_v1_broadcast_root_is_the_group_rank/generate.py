"""The same broadcast rooted at `get_model_parallel_rank()`: the rank within the group, which
differs on every member (and is not a global rank), so each process names another root."""
import torch

from megatron import mpu


def broadcast_prompts(context_tokens: torch.Tensor) -> torch.Tensor:
    torch.distributed.broadcast(context_tokens, mpu.get_model_parallel_rank(), group=mpu.get_model_parallel_group())  # expect: RC104
    return context_tokens
