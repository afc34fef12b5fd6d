"""A LightningModule keeps a torchmetrics metric as an attribute and computes it only on global zero
at the end of validation; compute() syncs states across every process."""
import lightning.pytorch as pl
import torch
from torchmetrics.classification import MulticlassF1Score


class LitTagger(pl.LightningModule):
    def __init__(self, num_tags: int = 17) -> None:
        super().__init__()
        self.encoder = torch.nn.LSTM(128, 256, batch_first=True)
        self.head = torch.nn.Linear(256, num_tags)
        self.val_f1 = MulticlassF1Score(num_classes=num_tags, average="macro")

    def validation_step(self, batch, batch_idx):
        tokens, tags = batch
        hidden, _ = self.encoder(tokens)
        self.val_f1.update(self.head(hidden).argmax(-1).flatten(), tags.flatten())

    def on_validation_epoch_end(self):
        if self.trainer.is_global_zero:
            f1 = self.val_f1.compute()  # expect: RC101
            print(f"macro F1 {f1:.4f}")
        self.val_f1.reset()
