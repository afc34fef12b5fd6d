"""A LightningModule logs the epoch accuracy with sync_dist=True only on global zero: the reduction
behind sync_dist runs on one process and waits for the others."""
import lightning as L
import torch
import torch.nn.functional as F


class LitClassifier(L.LightningModule):
    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.backbone = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(28 * 28, 128), torch.nn.ReLU(), torch.nn.Linear(128, num_classes))
        self.validation_step_outputs = []

    def forward(self, x):
        return self.backbone(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        preds = self(x).argmax(dim=-1)
        self.validation_step_outputs.append((preds == y).float().mean())

    def on_validation_epoch_end(self):
        epoch_acc = torch.stack(self.validation_step_outputs).mean()
        if self.trainer.is_global_zero:
            self.log("val_acc", epoch_acc, sync_dist=True)  # expect: RC101
        self.validation_step_outputs.clear()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)
