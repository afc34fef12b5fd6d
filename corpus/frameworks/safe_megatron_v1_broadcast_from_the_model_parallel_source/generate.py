"""gpt-neox's text generation: the prompts are tokenized on model-parallel rank 0 and broadcast to
the rest of its model-parallel group from the group's source rank, one process for the group."""
import torch

from megatron import mpu


def broadcast_prompts(context_tokens: torch.Tensor) -> torch.Tensor:
    torch.distributed.broadcast(context_tokens, mpu.get_model_parallel_src_rank(), group=mpu.get_model_parallel_group())
    return context_tokens
