"""Reconstruction of https://github.com/NVIDIA-NeMo/Automodel/issues/3254

Project: NVIDIA-NeMo/Automodel (BaseRecipe.save_checkpoint).
What hung: a consolidated checkpoint save ran past the SLURM wall-clock limit
and left a partial `epoch_X_step_N/` directory. The auto-resumed run correctly
restarted from the last complete checkpoint (LATEST), re-ran up to step N and
tried to save into the same directory. The existence check
`if os.path.exists(path): raise FileExistsError(...)` runs on rank 0 only, so
rank 0 raised and died while every other rank went on into the barrier and
the DCP save collectives and waited for rank 0 forever (issue text: "Rank 0
dies; the other ranks proceed into the next collective and block waiting for
rank 0 -> indefinite NCCL hang across all ranks").
Fix (PR #3261): checkpoint publication made failure-atomic (an `.incomplete`
marker while writing) and the reservation decision made collectively, so a
leftover partial directory is reclaimed by all ranks together.
Layout and names are trimmed from the recipe; the LATEST handling is inferred.
expected: RC102 at recipes/base_recipe.py line 49
"""
import logging
import os

import torch
import torch.distributed as dist

logger = logging.getLogger(__name__)


class BaseRecipe:
    def __init__(self, cfg, checkpointer):
        self.cfg = cfg
        self.checkpointer = checkpointer
        self._tracked = {}

    def __setattr__(self, key, value):
        super().__setattr__(key, value)
        if key in ("model", "optimizer", "lr_scheduler", "dataloader", "rng"):
            self.__dict__.setdefault("_tracked", {})[key] = value

    def _latest_link(self):
        return os.path.join(self.checkpointer.config.checkpoint_dir, "LATEST")

    def save_checkpoint(self, epoch: int, step: int, train_loss: float, val_loss=None):
        if not self.checkpointer.config.enabled:
            return
        path = os.path.join(self.checkpointer.config.checkpoint_dir, f"epoch_{epoch}_step_{step}")
        is_rank_0 = dist.get_rank() == 0
        if is_rank_0:
            if os.path.exists(path):
                raise FileExistsError(f"Checkpoint directory {path} already exists")  # expect: RC102
            os.makedirs(path)
            logger.info(f"Saving checkpoint to {path}")
        dist.barrier()

        self.checkpointer.save_model(self.model, path)
        self.checkpointer.save_optimizer(self.optimizer, self.model, path)
        for key in ("dataloader", "rng", "lr_scheduler"):
            if key in self._tracked:
                self.checkpointer.save_on_dp_ranks(self._tracked[key], key, path)

        if is_rank_0:
            torch.save({"epoch": epoch, "step": step, "train_loss": train_loss, "val_loss": val_loss},
                       os.path.join(path, "losses.pt"))
            link = self._latest_link()
            if os.path.islink(link):
                os.unlink(link)
            os.symlink(os.path.basename(path), link)
        dist.barrier()

    def load_checkpoint(self):
        link = self._latest_link()
        if not os.path.exists(link):
            return None
        path = os.path.realpath(link)
        self.checkpointer.load_model(self.model, path)
        self.checkpointer.load_optimizer(self.optimizer, self.model, path)
        meta = torch.load(os.path.join(path, "losses.pt"), map_location="cpu")
        logger.info(f"Resumed from {path} (step {meta['step']})")
        return meta
