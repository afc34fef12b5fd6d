"""Scatter-gather P2P between pipeline stages: what a stage receives it holds as a 1/tp slice and
re-gathers over its tensor-parallel group. The stage tests choose which neighbour a rank talks to;
every member of a tensor-parallel group is on one stage, so all members take the same arm and
meet in the tensor-parallel all_gather."""
import torch

from megatron import mpu


def recv_forward(shape, dtype):
    if mpu.is_pipeline_first_stage():
        return None
    received = torch.empty(shape, dtype=dtype)
    return mpu.gather_split_1d_tensor(received).view(shape)


def recv_backward(shape, dtype):
    if mpu.is_pipeline_last_stage():
        return None
    received = torch.empty(shape, dtype=dtype)
    return mpu.gather_split_1d_tensor(received).view(shape)
