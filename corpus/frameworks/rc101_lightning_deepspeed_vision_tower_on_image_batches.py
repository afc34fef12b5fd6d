"""A LightningModule for image-text pretraining trained with DeepSpeed ZeRO-3 (Lightning's
DeepSpeedStrategy, stage 3): the training step encodes images only when its batch carries some.
Under ZeRO-3 the vision encoder's forward all-gathers its partitioned parameters, so the ranks
with image batches wait there for the ranks whose batch was text-only."""
import lightning as L
import torch
import torch.nn as nn
from lightning.pytorch.strategies import DeepSpeedStrategy


class CaptionModel(L.LightningModule):
    def __init__(self, vision: nn.Module, text: nn.Module, dim: int):
        super().__init__()
        self.vision = vision
        self.text = text
        self.proj = nn.Linear(dim, dim)
        self.dropout = nn.Dropout(0.1)

    def training_step(self, batch, batch_idx):
        hidden = self.text(batch["input_ids"])
        images = batch.get("images")
        if images is not None:
            feats = self.vision(images)  # expect: RC101
            hidden = hidden + self.proj(feats).mean(dim=1, keepdim=True)
        if batch_idx % 2 == 0:
            hidden = self.dropout(hidden)
        loss = hidden.float().pow(2).mean()
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)


def main(vision, text, loader):
    trainer = L.Trainer(devices=8, strategy=DeepSpeedStrategy(stage=3), max_epochs=1)
    trainer.fit(CaptionModel(vision, text, 768), loader)
