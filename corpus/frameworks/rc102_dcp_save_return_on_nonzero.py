"""A sharded checkpoint with torch.distributed.checkpoint: ranks other than 0 return before
dcp.save, whose planning (gather + broadcast) needs every rank."""
import os

import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import get_state_dict


def save(model, optimizer, step: int, root: str) -> None:
    model_sd, optim_sd = get_state_dict(model, optimizer)
    if dist.get_rank() != 0:
        return  # expect: RC102
    os.makedirs(root, exist_ok=True)
    dcp.save({"model": model_sd, "optim": optim_sd, "step": step}, checkpoint_id=os.path.join(root, f"step{step}"))
