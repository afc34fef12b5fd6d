"""Multi-dataset validation in Lightning: at the end of the epoch each rank logs one accuracy per
dataset it saw, so the dictionary passed to `self.log_dict(..., sync_dist=True)` has different
keys on different ranks.

Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/19106 ("Deadlock on `log_dict` with different keys across ranks")
Project: Lightning-AI/pytorch-lightning
What hung: with `sync_dist=True` Lightning reduces every logged key with its own collective, in
key order. A rank that logs an extra key issues an extra reduction (the traceback ends in
`_sync_ddp` -> `broadcast`, and the debug mode reports "Detected mismatch between collectives on
ranks"); the other ranks are already in the next collective.
Fix (the rule a Lightning maintainer added to the `self.log` docstring for this kind of report,
Lightning-AI/pytorch-lightning#19917): every rank must log the same keys -- log every dataset's
metric on every rank (zero count where a rank saw none) and let the reduction combine them.
Expected rankcheck finding: RC103 on the `self.log_dict(...)` call: it issues one reduction per key
of a dictionary whose keys depend on each rank's data.
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
        metrics = {f"val_acc/{source}": self._val_hits[source] / self._val_counts[source] for source in self._val_counts}
        self.log_dict(metrics, sync_dist=True)  # expect: RC103
        self._val_hits.clear()
        self._val_counts.clear()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=3e-4)
