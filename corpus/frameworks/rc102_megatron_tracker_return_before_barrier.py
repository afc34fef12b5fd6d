"""A Megatron-style checkpoint tracker: non-zero data-parallel ranks return early, but the function
ends in a world barrier that data-parallel rank 0 then waits in forever."""
import os

import torch
from megatron.core import mpu


def write_tracker(save_dir: str, iteration: int) -> None:
    if mpu.get_data_parallel_rank() != 0:
        return  # expect: RC102
    tracker = os.path.join(save_dir, "latest_checkpointed_iteration.txt")
    with open(tracker, "w") as f:
        f.write(str(iteration))
    torch.distributed.barrier()
