"""Safe twin of sleap_nn_callback_metrics_read_under_global_zero/model.py: unchanged; the metrics
are still logged with `sync_dist=True` (the fix is in callbacks.py).

Thread: https://github.com/talmolab/sleap-nn/pull/476 ("Move callback_metrics access before is_global_zero to fix DDP collective mismatch")
Project: talmolab/sleap-nn
Expected rankcheck finding: none.
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
