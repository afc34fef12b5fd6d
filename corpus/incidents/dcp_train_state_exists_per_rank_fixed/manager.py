"""Safe twin of dcp_train_state_exists_per_rank: rank 0's `exists()` decides for the whole group
and is broadcast; every rank then takes part in the same `broadcast_object_list`.

Thread: https://github.com/KempnerInstitute/KempnerForge/pull/50
"""
import os
from pathlib import Path

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict


class CheckpointManager:
    def __init__(self, root: str, model, optimizer):
        self.root = Path(root)
        self.model = model
        self.optimizer = optimizer

    def save(self, step: int, train_state: dict) -> None:
        ckpt_dir = self.root / f"step_{step}"
        model_sd, optim_sd = get_state_dict(self.model, self.optimizer)
        dcp.save({"model": model_sd, "optim": optim_sd}, checkpoint_id=str(ckpt_dir))
        if dist.get_rank() == 0:
            torch.save(train_state, ckpt_dir / "train_state.pt")
        dist.barrier()

    def load(self, step: int) -> dict:
        ckpt_dir = self.root / f"step_{step}"
        model_sd, optim_sd = get_state_dict(self.model, self.optimizer)
        state = {"model": model_sd, "optim": optim_sd}
        dcp.load(state, checkpoint_id=str(ckpt_dir))
        set_state_dict(self.model, self.optimizer, model_state_dict=state["model"], optim_state_dict=state["optim"])

        train_state_path = ckpt_dir / "train_state.pt"
        exists = [train_state_path.exists()] if dist.get_rank() == 0 else [None]
        dist.broadcast_object_list(exists, src=0)
        train_state = {}
        if exists[0]:
            payload = [torch.load(train_state_path, weights_only=False)] if dist.get_rank() == 0 else [None]
            dist.broadcast_object_list(payload, src=0)
            train_state = payload[0]
        return train_state
