"""Megatron-style generation: the last pipeline stage's sampled tokens go to the first stage over
the embedding group (the pipeline's first and last stage), from the pipeline's last rank. Every
member of the embedding group lies in one pipeline group and names the same last rank, so the
broadcast has one root on all of them (Megatron-DeepSpeed text_generation_utils)."""
import torch
from megatron import mpu


def share_new_tokens(tokens, new_tokens, context_length):
    if mpu.is_rank_in_embedding_group():
        src = mpu.get_pipeline_model_parallel_last_rank()
        group = mpu.get_embedding_group()
        if not mpu.is_pipeline_last_stage():
            new_tokens = torch.empty_like(tokens[:, context_length])
        torch.distributed.broadcast(new_tokens, src, group)
        tokens[:, context_length] = new_tokens
    return tokens
