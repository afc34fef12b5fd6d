"""Megatron's checkpointing.py order: rank 0 writes the tracker file, then every rank meets at the
barrier."""
import os

import torch
from megatron.core import mpu


def write_tracker(save_dir: str, iteration: int) -> None:
    if torch.distributed.get_rank() == 0:
        tracker = os.path.join(save_dir, "latest_checkpointed_iteration.txt")
        with open(tracker, "w") as f:
            f.write(str(iteration))
    torch.distributed.barrier()
