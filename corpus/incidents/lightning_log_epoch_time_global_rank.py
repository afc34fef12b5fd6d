"""Potential-energy model training in Lightning (modelforge): the epoch wall time is logged from
`on_train_epoch_end`, but only on global rank 0.

Thread: https://github.com/choderalab/modelforge/pull/313 ("Dev global rank")
Project: choderalab/modelforge (PyTorch Lightning)
What hung: "logging of the epoch time was intended to occur only on the main process (rank == 0).
However, this led to a synchronization error that caused training to freeze after the first
epoch." A `self.log` that reduces the value across processes is a collective; wrapped in
`if self.global_rank == 0:` it ran on rank 0 alone. (Reconstructed with `sync_dist=True`, the
setting under which a rank-0-only `self.log` must hang; the PR does not quote the exact call.)
Fix (the PR): drop the `if self.global_rank == 0` checks and pass `rank_zero_only=True` to
`self.log` for rank-0-only values; keep `sync_dist=True` only for values every rank logs.
Expected rankcheck finding: RC101 on the guarded `self.log(..., sync_dist=True)`.
"""
import time

import lightning as L
import torch
import torch.nn.functional as F


class TrainingAdapter(L.LightningModule):
    def __init__(self, potential: torch.nn.Module, lr: float = 1e-3):
        super().__init__()
        self.potential = potential
        self.lr = lr
        self.epoch_start_time = None

    def training_step(self, batch, batch_idx):
        predicted = self.potential(batch["positions"], batch["atomic_numbers"])
        loss = F.mse_loss(predicted, batch["energy"])
        self.log("train/per_system_energy/mse", loss, on_step=False, on_epoch=True, sync_dist=True)
        return loss

    def on_train_epoch_start(self):
        self.epoch_start_time = time.time()

    def on_train_epoch_end(self):
        if self.global_rank == 0:
            epoch_time = time.time() - self.epoch_start_time
            self.log("epoch_time", torch.tensor(epoch_time, device=self.device), on_epoch=True, sync_dist=True)  # expect: RC101
        self.log("lr", self.trainer.optimizers[0].param_groups[0]["lr"], on_epoch=True, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.potential.parameters(), lr=self.lr)


def train(potential, datamodule, devices: int = 4):
    trainer = L.Trainer(max_epochs=100, accelerator="gpu", devices=devices, strategy="ddp")
    trainer.fit(TrainingAdapter(potential), datamodule=datamodule)
