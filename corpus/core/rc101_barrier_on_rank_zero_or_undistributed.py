"""The look-alike of safe_barrier_on_every_distributed_rank_tested_against_minus_one.py: the
barrier is under `LOCAL_RANK in {-1, 0}`, the yolov5 idiom for "the main process, or the only
one"; in a distributed run only local rank 0 takes it."""
import os

import torch
import torch.distributed as dist

LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))


def save(model: torch.nn.Module, path: str) -> None:
    if LOCAL_RANK in {-1, 0}:
        torch.save(model.state_dict(), path)
        dist.barrier()  # expect: RC101
