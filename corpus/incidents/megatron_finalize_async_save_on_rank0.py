"""Megatron actor of an RL framework (radixark/miles): after an asynchronous checkpoint save, a
post-save hook (e.g. uploading the checkpoint) must see the files complete, so the save is
finalized before the hook runs -- on rank 0 only, where the hook runs.

Thread: https://github.com/radixark/miles/pull/1763 ("fix(megatron): finalize async saves on all ranks before hooks")
Project: radixark/miles (Megatron-LM distributed checkpointing)
What hung: "Megatron distributed-checkpoint finalization performs distributed coordination. The
post-save hook path previously called blocking finalization only on rank 0, while the other ranks
returned from `save_model`. Multi-rank jobs could therefore hang indefinitely before the hook ran."
Fix (the PR): "finalize Megatron asynchronous checkpoint saves on every training rank before invoking
a post-save hook; keep post-save hook execution restricted to rank 0."
Expected rankcheck finding: RC101 on the rank-0-only `maybe_finalize_async_save(blocking=True)`.
"""
import logging
import os

import torch.distributed as dist
from megatron.training.async_utils import maybe_finalize_async_save
from megatron.training.checkpointing import save_checkpoint

logger = logging.getLogger(__name__)


class MegatronTrainRayActor:
    def __init__(self, args, model, optimizer, opt_param_scheduler, post_save_hook=None):
        self.args = args
        self.model = model
        self.optimizer = optimizer
        self.opt_param_scheduler = opt_param_scheduler
        self.post_save_hook = post_save_hook

    def save_model(self, iteration: int):
        save_checkpoint(
            iteration,
            self.model,
            self.optimizer,
            self.opt_param_scheduler,
            num_floating_point_operations_so_far=0,
        )
        if self.post_save_hook is not None and dist.get_rank() == 0:
            maybe_finalize_async_save(blocking=True)  # expect: RC101
            ckpt_dir = os.path.join(self.args.save, f"iter_{iteration:07d}")
            logger.info("running post-save hook for %s", ckpt_dir)
            self.post_save_hook(ckpt_dir)
