"""Safe twin of speechbrain_intra_epoch_ckpt_time_barrier: as in speechbrain#1167 the intra-epoch
checkpoint is written by the main process alone, with no barrier, so a per-process clock decides
nothing collective.

Thread: https://github.com/speechbrain/speechbrain/issues/1166
"""
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from distributed import if_main_process


class Brain:
    def __init__(self, modules, opt_class, hparams, checkpointer=None):
        if dist.is_initialized():
            modules = DDP(modules, device_ids=[int(os.environ["LOCAL_RANK"])])
        self.modules = modules
        self.optimizer = opt_class(modules.parameters())
        self.hparams = hparams
        self.checkpointer = checkpointer
        self.ckpt_interval_minutes = hparams.get("ckpt_interval_minutes", 0)
        self.step = 0

    def compute_objectives(self, predictions, batch):
        return torch.nn.functional.cross_entropy(predictions, batch["labels"])

    def fit_batch(self, batch):
        predictions = self.modules(batch["feats"])
        loss = self.compute_objectives(predictions, batch)
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        return loss.detach()

    def _save_intra_epoch_ckpt(self):
        self.checkpointer.save_and_keep_only(end_of_epoch=False, num_to_keep=1, meta={"step": self.step})

    def _fit_train(self, train_set, epoch):
        self.modules.train()
        last_ckpt_time = time.time()
        for batch in train_set:
            self.step += 1
            self.fit_batch(batch)
            if (
                self.checkpointer is not None
                and self.ckpt_interval_minutes > 0
                and time.time() - last_ckpt_time >= self.ckpt_interval_minutes * 60.0
            ):
                if if_main_process():
                    self._save_intra_epoch_ckpt()
                last_ckpt_time = time.time()
