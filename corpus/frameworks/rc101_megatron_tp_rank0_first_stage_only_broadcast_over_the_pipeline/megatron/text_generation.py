"""The same prompt hand-off with the receiving arm missing: under `tp_rank == 0` (whole pipeline
groups) only the first stage broadcasts over the pipeline group, and the later stages, members of
that group, never join: the first stage waits in the broadcast."""
import torch

from megatron import mpu


def send_prompt(context_tokens, context_length):
    if mpu.get_tensor_model_parallel_rank() == 0:
        src = mpu.get_pipeline_model_parallel_first_rank()
        group = mpu.get_pipeline_model_parallel_group()
        if mpu.is_pipeline_first_stage():
            tokens = torch.tensor(context_tokens, dtype=torch.int64)
            torch.distributed.broadcast(tokens, src, group)  # expect: RC101
    return context_tokens
