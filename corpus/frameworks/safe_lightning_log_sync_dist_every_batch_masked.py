"""The per-class accuracy logged by every rank on every batch: a batch without the class adds
zero hits out of zero samples, and both sums are all-reduced everywhere before dividing."""
import lightning as L
import torch


class Classifier(L.LightningModule):
    def __init__(self, backbone: torch.nn.Module, rare_class: int = 7):
        super().__init__()
        self.backbone = backbone
        self.rare_class = rare_class

    def validation_step(self, batch, batch_idx):
        x, y = batch
        preds = self.backbone(x).argmax(-1)
        rare = (y == self.rare_class).float()
        self.log("val/rare_hits", ((preds == y).float() * rare).sum(), sync_dist=True, reduce_fx="sum")
        self.log("val/rare_seen", rare.sum(), sync_dist=True, reduce_fx="sum")
        self.log("val/acc", (preds == y).float().mean(), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)
