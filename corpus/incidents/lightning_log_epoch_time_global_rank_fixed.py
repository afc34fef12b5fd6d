"""Safe twin of lightning_log_epoch_time_global_rank.py: the epoch time is logged on every rank
with `rank_zero_only=True` (no cross-rank reduction), without the `if self.global_rank == 0` test.

Thread: https://github.com/choderalab/modelforge/pull/313
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
        epoch_time = time.time() - self.epoch_start_time
        self.log("epoch_time", torch.tensor(epoch_time, device=self.device), on_epoch=True, rank_zero_only=True)
        self.log("lr", self.trainer.optimizers[0].param_groups[0]["lr"], on_epoch=True, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.potential.parameters(), lr=self.lr)


def train(potential, datamodule, devices: int = 4):
    trainer = L.Trainer(max_epochs=100, accelerator="gpu", devices=devices, strategy="ddp")
    trainer.fit(TrainingAdapter(potential), datamodule=datamodule)
