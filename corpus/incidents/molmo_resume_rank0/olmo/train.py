"""Trainer with FSDP sharded checkpointing (trimmed from olmo/train.py).

Part of the reconstruction of https://github.com/allenai/molmo/pull/33;
see scripts/train.py for the incident description. Restoring a sharded
checkpoint is collective: every rank loads its shard through
torch.distributed.checkpoint and then meets the others at a barrier.
"""
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict

import torch
import torch.distributed.checkpoint as dcp
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import StateDictType

from olmo.torch_util import barrier, gc_cuda, get_global_rank, move_to_device


@dataclass
class Trainer:
    cfg: Any
    fsdp_model: FSDP
    optim: torch.optim.Optimizer
    scheduler: Any
    train_loader: Any
    device: torch.device
    global_step: int = 0
    checkpoints: list = field(default_factory=list)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        gc_cuda()
        return False

    def trainer_state_dict(self) -> Dict[str, Any]:
        return {"global_step": self.global_step}

    def save_checkpoint(self) -> Path:
        checkpoint_dir = Path(self.cfg.save_folder) / f"step{self.global_step}"
        with FSDP.state_dict_type(self.fsdp_model, StateDictType.SHARDED_STATE_DICT):
            state = {"model": self.fsdp_model.state_dict(),
                     "optim": FSDP.optim_state_dict(self.fsdp_model, self.optim)}
            dcp.save(state, checkpoint_id=str(checkpoint_dir))
        if get_global_rank() == 0:
            torch.save(self.trainer_state_dict(), checkpoint_dir / "train.pt")
            latest = Path(self.cfg.save_folder) / "latest"
            latest.unlink(missing_ok=True)
            latest.symlink_to(checkpoint_dir.name, target_is_directory=True)
        barrier()
        self.checkpoints.append(checkpoint_dir)
        return checkpoint_dir

    def restore_checkpoint(self, load_path, *, load_optimizer_state=True, load_trainer_state=True):
        self.optim.zero_grad(set_to_none=True)
        with FSDP.state_dict_type(self.fsdp_model, StateDictType.SHARDED_STATE_DICT):
            state = {"model": self.fsdp_model.state_dict()}
            if load_optimizer_state:
                state["optim"] = FSDP.optim_state_dict(self.fsdp_model, self.optim)
            dcp.load(state, checkpoint_id=str(load_path))
            self.fsdp_model.load_state_dict(state["model"])
            if load_optimizer_state:
                osd = FSDP.optim_state_dict_to_load(self.fsdp_model, self.optim, state["optim"])
                self.optim.load_state_dict(osd)
        if load_trainer_state:
            trainer_state = torch.load(os.path.join(load_path, "train.pt"), map_location="cpu")
            self.global_step = trainer_state["global_step"]
        barrier()
        gc_cuda()

    def train_step(self, batch) -> float:
        self.optim.zero_grad(set_to_none=True)
        batch = move_to_device(batch, self.device)
        loss = self.fsdp_model(**batch).loss
        loss.backward()
        self.fsdp_model.clip_grad_norm_(self.cfg.max_grad_norm)
        self.optim.step()
        self.scheduler.step()
        return loss.item()

    def fit(self):
        barrier()
        for batch in self.train_loader:
            loss = self.train_step(batch)
            self.global_step += 1
            if self.global_step % self.cfg.save_interval == 0:
                self.save_checkpoint()
            if self.global_step >= self.cfg.max_duration:
                break
        return loss
