"""Process-group setup for the voxel2clip trainers (torchrun / SLURM launch)."""
import os

import torch
import torch.distributed as dist


def set_ddp():
    """Initialise NCCL from the torchrun environment and pin this process to its GPU."""
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    world_size = int(os.environ.get("WORLD_SIZE", 1))
    dist.init_process_group(backend="nccl", init_method="env://")
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    return world_size, local_rank, device
