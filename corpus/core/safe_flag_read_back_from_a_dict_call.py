"""The look-alike of rc101_rank_read_back_from_a_dict_call: the barrier is under the mapping's
`distributed` entry, which is the same on every rank; the rank sits in another entry."""
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
    if info["distributed"]:
        dist.barrier()
