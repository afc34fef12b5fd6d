"""The look-alike of safe_megatron_embedding_group_broadcast_from_the_last_stage.py whose root is
the tensor-parallel source rank: the first and last stage of a pipeline hold different
tensor-parallel groups, so the two members of an embedding group name different roots."""
import torch
from megatron import mpu


def share_new_tokens(tokens, new_tokens, context_length):
    if mpu.is_rank_in_embedding_group():
        src = mpu.get_tensor_model_parallel_src_rank()
        group = mpu.get_embedding_group()
        if not mpu.is_pipeline_last_stage():
            new_tokens = torch.empty_like(tokens[:, context_length])
        torch.distributed.broadcast(new_tokens, src, group)  # expect: RC104
        tokens[:, context_length] = new_tokens
    return tokens
