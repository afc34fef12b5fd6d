"""Checkpoint manager of an LLM training framework: model and optimizer go through
torch.distributed.checkpoint (DCP); the small trainer state (step, data position, RNG) is a
`train_state.pt` that rank 0 reads and broadcasts.

Thread: https://github.com/KempnerInstitute/KempnerForge/issues/49 (fix: https://github.com/KempnerInstitute/KempnerForge/pull/50)
Project: KempnerInstitute/KempnerForge
What hung: "`CheckpointManager.load()` independently calls `train_state_path.exists()` on every rank.
On a distributed filesystem those stat results can briefly disagree. When they do, some ranks enter
the `torch.load` branch and others skip it, then the following `broadcast_object_list` deadlocks
because the non-participating ranks never post the matching collective."
Fix (the PR): "let rank 0's `exists()` decide for the group and broadcast the flag. Only rank 0 calls
`torch.load`; the existing object broadcast propagates the loaded state to everyone else."
Expected rankcheck finding: RC101 on the `broadcast_object_list` reached only on ranks where the
per-rank filesystem check succeeded.
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
        train_state = {}
        if train_state_path.exists():
            payload = [torch.load(train_state_path, weights_only=False)] if dist.get_rank() == 0 else [None]
            dist.broadcast_object_list(payload, src=0)  # expect: RC101
            train_state = payload[0]
        return train_state
