"""Safe twin of lightning_log_dict_keys_differ_per_rank.py: every rank logs the same keys (one per
configured source); the per-rank hit and sample counts are summed across ranks and the accuracy
is computed from the sums.

Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/19106
"""
from collections import defaultdict

import lightning as L
import torch
import torch.nn.functional as F


class MultiSourceClassifier(L.LightningModule):
    def __init__(self, backbone: torch.nn.Module, num_classes: int, source_names):
        super().__init__()
        self.backbone = backbone
        self.head = torch.nn.Linear(backbone.out_features, num_classes)
        self.source_names = list(source_names)
        self._val_hits = defaultdict(float)
        self._val_counts = defaultdict(float)

    def forward(self, x):
        return self.head(self.backbone(x))

    def training_step(self, batch, batch_idx):
        logits = self(batch["image"])
        loss = F.cross_entropy(logits, batch["label"])
        self.log("train_loss", loss, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        preds = self(batch["image"]).argmax(-1)
        for source, pred, label in zip(batch["source"], preds, batch["label"]):
            self._val_hits[source] += float(pred == label)
            self._val_counts[source] += 1.0

    def on_validation_epoch_end(self):
        stats = torch.tensor(
            [[self._val_hits[s], self._val_counts[s]] for s in self.source_names], device=self.device
        )
        stats = self.trainer.strategy.reduce(stats, reduce_op="sum")
        metrics = {f"val_acc/{s}": (stats[i, 0] / stats[i, 1].clamp(min=1.0)) for i, s in enumerate(self.source_names)}
        self.log_dict(metrics)
        self._val_hits.clear()
        self._val_counts.clear()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=3e-4)
