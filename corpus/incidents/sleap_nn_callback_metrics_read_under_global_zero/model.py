"""Pose-estimation LightningModule of a sleap-nn style trainer: every metric is logged with
`sync_dist=True` so that all DDP ranks agree on it (checkpointing and early stopping read them).

Thread: https://github.com/talmolab/sleap-nn/pull/476 ("Move callback_metrics access before is_global_zero to fix DDP collective mismatch")
Project: talmolab/sleap-nn
What hung: "accessing `trainer.callback_metrics` inside `if trainer.is_global_zero:` causes a
collective mismatch. The property triggers an implicit `all_reduce` (via `compute()` ->
`strategy.reduce()`) when metrics are logged with `sync_dist=True`. Since only rank 0 enters the
guard, rank 1 hits a `barrier` instead -- ALLREDUCE on rank 0 vs BARRIER on rank 1."
Fix (the PR, merged): "Move `trainer.callback_metrics` access outside `if trainer.is_global_zero:`
so all ranks participate in the implicit `all_reduce`"; the logging here stays as it is.
Expected rankcheck finding: none in this module; RC101 in callbacks.py on each `trainer.callback_metrics`
read under `trainer.is_global_zero`, which reaches the all-reduce of the metrics logged here.
"""
import lightning as L
import torch
import torch.nn.functional as F


class SingleInstanceModel(L.LightningModule):
    def __init__(self, backbone: torch.nn.Module, head: torch.nn.Module, learning_rate: float = 1e-4):
        super().__init__()
        self.backbone = backbone
        self.head = head
        self.learning_rate = learning_rate

    def forward(self, image):
        return self.head(self.backbone(image))

    def training_step(self, batch, batch_idx):
        confmaps = self(batch["image"])
        loss = F.mse_loss(confmaps, batch["confidence_maps"])
        self.log("train_loss", loss, on_step=True, on_epoch=True, prog_bar=True, sync_dist=True)
        self.log("train/lr", self.optimizers().param_groups[0]["lr"], on_step=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        confmaps = self(batch["image"])
        loss = F.mse_loss(confmaps, batch["confidence_maps"])
        self.log("val_loss", loss, on_step=False, on_epoch=True, prog_bar=True, sync_dist=True)

    def configure_optimizers(self):
        optimizer = torch.optim.Adam(self.parameters(), lr=self.learning_rate)
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", patience=5)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "monitor": "val_loss"}}
