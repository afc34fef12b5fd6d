"""Talking-head video generator in Lightning: sample quality is measured once per validation run in
an `on_validation_end` hook decorated with `@rank_zero_only`, which computes a
FrechetInceptionDistance.

Thread: https://github.com/Lightning-AI/torchmetrics/issues/2684 ("`FrechetInceptionDistance` hangs when used with multiple devices in PytorchLightning")
Project: Lightning-AI/torchmetrics
What hung: "I have `on_validation_end` decorated with `rank_zero_only` so I'm not sure why multiple
devices would even affect this." The decorated hook runs on rank 0 only, and the FID's
`compute()` synchronizes the metric state across all processes (`sync_on_compute=True` by
default); rank 0 waited there for processes that skipped the hook.
Fix (maintainer SkafteNicki, documented as a pitfall in torchmetrics PR #2719, "Fixes #2684"): a
metric computed inside a rank-zero-only method must not synchronize -- create it with
`sync_on_compute=False`.
Expected rankcheck finding: RC107 on the `@rank_zero_only` hook that reaches `FID.compute()`.
"""
import lightning as L
import torch
import torch.nn.functional as F
from lightning.pytorch.utilities import rank_zero_only
from torchmetrics.image.fid import FrechetInceptionDistance


class TalkingHeadModule(L.LightningModule):
    def __init__(self, generator: torch.nn.Module, lr: float = 1e-4):
        super().__init__()
        self.generator = generator
        self.lr = lr
        self.fid = FrechetInceptionDistance(feature=2048, normalize=True)
        self.last_val_batch = None

    def forward(self, overlapping, video, masks, identity):
        return self.generator(overlapping, video, masks, identity)

    def training_step(self, batch, batch_idx):
        pred = self(batch["overlapping"], batch["video"], batch["masks"], batch["identity"])
        loss = F.l1_loss(pred, batch["video"])
        self.log("train_l1", loss, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        self.last_val_batch = batch
        pred = self(batch["overlapping"], batch["video"], batch["masks"], batch["identity"])
        self.log("val_l1", F.l1_loss(pred, batch["video"]), sync_dist=True)

    @rank_zero_only
    def on_validation_end(self) -> None:  # expect: RC107
        batch = self.last_val_batch
        with torch.no_grad():
            images_pred = self(
                batch["overlapping"].flatten(0, 1),
                batch["video"].flatten(0, 1),
                batch["masks"].flatten(0, 1),
                batch["identity"].flatten(0, 1),
            )
        images = batch["video"].flatten(0, 1).clamp(0, 1)
        self.fid.update(images, real=True)
        self.fid.update(images_pred.clamp(0, 1), real=False)
        fid = self.fid.compute()
        self.fid.reset()
        self.logger.experiment.add_scalar("val/fid", fid.item(), self.global_step)

    def configure_optimizers(self):
        return torch.optim.Adam(self.generator.parameters(), lr=self.lr)
