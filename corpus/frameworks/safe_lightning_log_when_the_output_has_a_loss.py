"""A LightningModule logs the auxiliary loss when the model's output has one and the batch holds
labels: every rank's model returns the same fields and every rank's collator builds the same
keys (only the values differ), so every rank takes the same arm and meets in the all-reduce."""
import lightning as L
import torch


class Tagger(L.LightningModule):
    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def training_step(self, batch, batch_idx):
        outputs = self.model(**batch)
        if outputs.aux_loss is not None:
            self.log("train/aux_loss", outputs.aux_loss, sync_dist=True)
        if "labels" in batch:
            self.log("train/loss", outputs.loss, sync_dist=True)
        return outputs.loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)
