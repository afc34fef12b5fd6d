"""Epoch runner (safe twin of ppln_early_stopping_on_rank0_merged_log_buffer): the merged fix of
ppln#43 is in hooks.py -- LogBufferHook broadcasts rank 0's averaged values to every rank after the
sync, so EarlyStoppingHook sets `stop_training` on all ranks at the same epoch.
"""
import os
from typing import Dict, List

import torch

from .hooks import BaseHook, HookList
from .log_buffer import LogBuffer


class Runner(HookList):
    def __init__(self, model, optimizers, schedulers, batch_processor, hooks: List[BaseHook], work_dir, logger):
        super().__init__(hooks)
        os.makedirs(work_dir, exist_ok=True)
        self.work_dir = work_dir
        self.logger = logger
        self.model = model
        self.optimizers: Dict[str, torch.optim.Optimizer] = optimizers
        self.schedulers = schedulers
        self.batch_processor = batch_processor
        self.log_buffer = LogBuffer()

        self.outputs = None
        self.mode = None
        self.data_loader = None
        self.epoch = 0
        self.iter = 0
        self.inner_iter = 0
        self.max_epochs = 0
        self.stop_training = False

    @property
    def train_mode(self):
        return self.mode == "train"

    def run(self, data_loaders, max_epochs):
        self.max_epochs = max_epochs
        self.call("before_run")
        for self.epoch in range(self.epoch, max_epochs):
            for self.mode, self.data_loader in data_loaders.items():
                self.run_mode()
            if self.stop_training:
                break
        self.call("after_run")

    def run_mode(self):
        self.model.train(self.train_mode)
        if hasattr(self.data_loader.sampler, "set_epoch"):
            self.data_loader.sampler.set_epoch(self.epoch)
        self.call(f"before_{self.mode}_epoch")
        for self.inner_iter, batch in enumerate(self.data_loader):
            self.run_batch(batch)
        self.call(f"after_{self.mode}_epoch")

    def run_batch(self, batch):
        self.call(f"before_{self.mode}_iter")
        with torch.set_grad_enabled(self.train_mode):
            step = getattr(self.batch_processor, f"{self.mode}_step")
            self.outputs = step(self.model, batch)
            self.log_buffer.update(self.outputs["values"], self.outputs["num_samples"])
        self.call(f"after_{self.mode}_iter")
        if self.train_mode:
            self.iter += 1
