"""Interactive generation with pipelining (Megatron-DeepSpeed's text_generation_utils): the
tensor-parallel rank 0 of every stage takes part in sending the prompt down the pipeline; the
first stage broadcasts its tokens over the pipeline group, every other stage receives them into a
buffer of the agreed length. The pipeline group's members share the tensor-parallel rank, so the
`tp_rank == 0` test takes whole pipeline groups in or out, and inside it both arms broadcast."""
import torch

from megatron import mpu


def send_prompt(context_tokens, context_length):
    if mpu.get_tensor_model_parallel_rank() == 0:
        src = mpu.get_pipeline_model_parallel_first_rank()
        group = mpu.get_pipeline_model_parallel_group()
        if mpu.is_pipeline_first_stage():
            tokens = torch.tensor(context_tokens, dtype=torch.int64)
            torch.distributed.broadcast(tokens, src, group)
        else:
            tokens = torch.empty(context_length, dtype=torch.int64)
            torch.distributed.broadcast(tokens, src, group)
            context_tokens = tokens.tolist()
    return context_tokens
