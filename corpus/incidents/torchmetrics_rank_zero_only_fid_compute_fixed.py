"""Safe twin of torchmetrics_rank_zero_only_fid_compute.py: the FID used inside the rank-zero-only
hook is created with `sync_on_compute=False`, so its `compute()` issues no collective.

Thread: https://github.com/Lightning-AI/torchmetrics/issues/2684 (pitfall documented in torchmetrics#2719)
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
        self.fid = FrechetInceptionDistance(feature=2048, normalize=True, sync_on_compute=False)
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
    def on_validation_end(self) -> None:
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
