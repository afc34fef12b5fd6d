"""open_clip-shaped set-up: the device helper returns its facts with `dict(...)`, the script tests
`info["global_rank"] == 0` around a barrier only rank 0 reaches. (The look-alike tests the
`distributed` flag of the same mapping: alike on every rank.)"""
import os

import torch.distributed as dist


def init_distributed_device(dist_backend: str = "nccl"):
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    global_rank = int(os.environ.get("RANK", "0"))
    distributed = world_size > 1
    if distributed:
        dist.init_process_group(backend=dist_backend)
    return dict(device="cuda", global_rank=global_rank, world_size=world_size, distributed=distributed)


def main():
    info = init_distributed_device()
    if info["global_rank"] == 0:
        os.makedirs("checkpoints", exist_ok=True)
        dist.barrier()  # expect: RC101
