"""Scripts in the yolov5 and Hugging Face examples style read `LOCAL_RANK` with a default of -1,
which means "not distributed", and test `LOCAL_RANK != -1` before the distributed calls. Every
rank of a distributed run has a rank >= 0, so all of them take that arm and meet at the barrier."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))


def prepare(model: torch.nn.Module) -> torch.nn.Module:
    if LOCAL_RANK != -1:
        dist.init_process_group("nccl")
        model = DDP(model.cuda(LOCAL_RANK), device_ids=[LOCAL_RANK])
    if LOCAL_RANK != -1:
        dist.barrier()
    return model
