"""Safe twin of megatron_finalize_async_save_on_rank0.py: every rank finalizes the asynchronous
save (a collective), then rank 0 alone runs the post-save hook.

Thread: https://github.com/radixark/miles/pull/1763
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
        if self.post_save_hook is None:
            return
        maybe_finalize_async_save(blocking=True)
        if dist.get_rank() == 0:
            ckpt_dir = os.path.join(self.args.save, f"iter_{iteration:07d}")
            logger.info("running post-save hook for %s", ckpt_dir)
            self.post_save_hook(ckpt_dir)
