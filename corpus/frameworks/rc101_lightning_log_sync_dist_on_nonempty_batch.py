"""A LightningModule logs a per-class accuracy only when this rank's batch holds that class, with
sync_dist=True: the ranks whose batch has no such sample skip the all-reduce the others enter."""
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
        rare = y == self.rare_class
        if rare.any():
            rare_acc = (preds[rare] == y[rare]).float().mean()
            self.log("val/rare_acc", rare_acc, sync_dist=True)  # expect: RC101
        self.log("val/acc", (preds == y).float().mean(), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)
