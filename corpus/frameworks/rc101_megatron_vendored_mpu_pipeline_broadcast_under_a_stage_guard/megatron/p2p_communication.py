"""Text generation on a vendored-mpu Megatron: the last stage broadcasts whether every sequence is
done over the pipeline group, but only under `is_pipeline_last_stage()`; the pipeline group
crosses the stages, so the other stages, which skip the broadcast, leave the last stage waiting
(the receiving arm is missing: the fix adds it)."""
import torch

from megatron import mpu


def share_done(done):
    if mpu.is_pipeline_last_stage():
        src = torch.distributed.get_world_size() - 1
        torch.distributed.broadcast(done, src, group=mpu.get_pipeline_model_parallel_group())  # expect: RC101
    return done
