"""Epoch-based runner (mmcv/runner/epoch_based_runner.py) with the optimizer, checkpoint and text
logger hooks folded in."""
import logging
import os
import time
from collections import defaultdict

import torch
import torch.distributed as dist
from torch.nn.utils import clip_grad_norm_

logger = logging.getLogger("mmdet")


class EpochBasedRunner:
    def __init__(self, model, optimizer, work_dir, max_epochs, log_interval=50, grad_clip=None,
                 lr_steps=(8, 11), warmup_iters=500, warmup_ratio=0.001):
        self.model = model
        self.optimizer = optimizer
        self.work_dir = work_dir
        self.max_epochs = max_epochs
        self.log_interval = log_interval
        self.grad_clip = grad_clip
        self.lr_steps = lr_steps
        self.warmup_iters = warmup_iters
        self.warmup_ratio = warmup_ratio
        self.base_lrs = [group["lr"] for group in optimizer.param_groups]
        self.rank = dist.get_rank() if dist.is_initialized() else 0
        self.epoch = 0
        self.iter = 0

    def _set_lr(self):
        factor = 0.1 ** sum(self.epoch >= s for s in self.lr_steps)
        if self.iter < self.warmup_iters:
            k = (1 - self.iter / self.warmup_iters) * (1 - self.warmup_ratio)
            factor *= 1 - k
        for group, base_lr in zip(self.optimizer.param_groups, self.base_lrs):
            group["lr"] = base_lr * factor

    def train(self, data_loader):
        self.model.train()
        meters = defaultdict(float)
        count = 0
        t0 = time.time()
        for i, data_batch in enumerate(data_loader):
            self._set_lr()
            outputs = self.model.train_step(data_batch, self.optimizer)
            # OptimizerHook.after_train_iter
            self.optimizer.zero_grad()
            outputs["loss"].backward()
            if self.grad_clip is not None:
                clip_grad_norm_(self.model.parameters(), **self.grad_clip)
            self.optimizer.step()
            for name, value in outputs["log_vars"].items():
                meters[name] += value
            count += 1
            self.iter += 1
            # TextLoggerHook
            if self.rank == 0 and (i + 1) % self.log_interval == 0:
                msg = ", ".join(f"{k}: {v / count:.4f}" for k, v in meters.items())
                logger.info(f"Epoch [{self.epoch + 1}][{i + 1}/{len(data_loader)}] "
                            f"lr: {self.optimizer.param_groups[0]['lr']:.3e}, "
                            f"time: {(time.time() - t0) / count:.3f}, {msg}")
                meters.clear()
                count = 0
                t0 = time.time()
        self.epoch += 1

    def save_checkpoint(self):
        if self.rank == 0:
            module = self.model.module if hasattr(self.model, "module") else self.model
            torch.save({"state_dict": module.state_dict(), "meta": {"epoch": self.epoch, "iter": self.iter}},
                       os.path.join(self.work_dir, f"epoch_{self.epoch}.pth"))

    def run(self, data_loader, sampler):
        logger.info("Start running, work_dir: %s, max: %d epochs", self.work_dir, self.max_epochs)
        while self.epoch < self.max_epochs:
            sampler.set_epoch(self.epoch)
            self.train(data_loader)
            self.save_checkpoint()
