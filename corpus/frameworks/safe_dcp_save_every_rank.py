"""The fix: every rank calls dcp.save (each writes its own shards); only the directory is rank 0's."""
import os

import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import get_state_dict


def save(model, optimizer, step: int, root: str) -> None:
    model_sd, optim_sd = get_state_dict(model, optimizer)
    if dist.get_rank() == 0:
        os.makedirs(root, exist_ok=True)
    dist.barrier()
    dcp.save({"model": model_sd, "optim": optim_sd, "step": step}, checkpoint_id=os.path.join(root, f"step{step}"))
