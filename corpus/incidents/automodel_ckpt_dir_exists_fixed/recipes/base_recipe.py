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
Fixed twin: rank 0 inspects the target directory and broadcasts its verdict;
all ranks then take the same path: reclaim a partial (.incomplete) directory
together, or raise together if a complete checkpoint is already there. The
`.incomplete` marker is removed only after the save finished on every rank.
No finding expected.
"""
import logging
import os
import shutil

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
        incomplete_marker = os.path.join(path, ".incomplete")
        verdict = [None]
        if is_rank_0:
            if not os.path.exists(path):
                verdict[0] = "fresh"
            elif os.path.exists(incomplete_marker):
                verdict[0] = "reclaim"
            else:
                verdict[0] = "complete"
        dist.broadcast_object_list(verdict, src=0)
        if verdict[0] == "complete":
            raise FileExistsError(f"Checkpoint directory {path} already exists")
        if is_rank_0:
            if verdict[0] == "reclaim":
                logger.warning(f"Reclaiming partial checkpoint directory {path}")
                shutil.rmtree(path)
            os.makedirs(path)
            open(incomplete_marker, "w").close()
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
            os.remove(incomplete_marker)
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
