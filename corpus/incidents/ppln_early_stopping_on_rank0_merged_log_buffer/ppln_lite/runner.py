"""Epoch runner: runs the 'train' and 'val' loaders each epoch and calls the hooks around every
iteration and epoch. A hook can end training by setting `runner.stop_training`.

Thread: https://github.com/ppln-team/ppln/pull/43 ("[Fix] fix behavior of EarlyStoppping during
DDP", merged as ff36087)
Project: ppln-team/ppln (ppln/runner.py, ppln/hooks/early_stopping.py, ppln/hooks/log_buffer.py)
What hung: with DDP the EarlyStoppingHook added two days earlier stopped training on some processes
only. `LogBufferHook.sync` merges the other ranks' metric histories into rank 0's log buffer
(through pickle files and barriers), so after `average()` rank 0 holds the metric of the whole
validation set while every other rank holds only its own shard's. `EarlyStoppingHook` compares that
per-rank value with its per-rank best and sets `runner.stop_training` on its own, so the ranks whose
patience ran out leave the epoch loop below while the others start the next epoch and wait in the
DDP gradient all-reduce (and in the next log-buffer barriers) for processes that are gone.
Fix (merged): after averaging, `LogBufferHook` broadcasts every averaged value from rank 0, so all
ranks take the early-stopping decision on the same number; the hooks' `after_run` logging became
master-only.
Expected rankcheck finding: RC103 on the `break` of the epoch loop, taken on the ranks whose
`stop_training` a hook set from their own metric.
Inferred: the PR has no description; the hang is read from the diff (per-rank metric -> per-rank
stop). The ImageNet-style classifier, the batch processor and the config values are written for this
reconstruction.
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
                break  # expect: RC103
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
