"""Brain-style training loop with time-based intra-epoch checkpoints (`ckpt_interval_minutes`).

Thread: https://github.com/speechbrain/speechbrain/issues/1166 ("Checkpointing may cause the NCCL error"; fix https://github.com/speechbrain/speechbrain/pull/1167)
Project: speechbrain/speechbrain
What hung: the maintainer's diagnosis -- "We're using the time since last checkpoint to determine if
we should checkpoint this - this will very slightly vary between the different processes.
Eventually, there comes a batch during which one of these two processes enters the intra-epoch
checkpoint saving block and the other does not. In the intra-epoch saving block, the run_on_main
function has a `ddp.barrier` synchronisation routine." The barrier of the process that entered met
the other process's next DDP collective ("Rank 0 is running inconsistent collective: BROADCAST").
Fix (PR #1167, "Remove ddp barrier from intra-epoch ckpt saving"): save on the main process only,
without the barrier.
Expected rankcheck finding: RC101 on the `run_on_main(...)` call, under a condition on each
process's own clock, which reaches the barrier.
"""
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from distributed import run_on_main


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
                run_on_main(self._save_intra_epoch_ckpt)  # expect: RC101
                last_ckpt_time = time.time()
