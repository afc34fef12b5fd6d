"""Semantic segmentation in Lightning DDP: `training_step` returns None to skip a random crop that
contains only ignore-index pixels -- a decision each rank takes from its own batch.

Thread: https://github.com/Lightning-AI/pytorch-lightning/pull/19918 ("Disable skipping training step in distributed training")
Project: Lightning-AI/pytorch-lightning
What hung: returning None from `training_step` skips the step. "This works fine in single-device
execution, but is an ill-defined behavior for distributed training. If the decision whether to skip
or not is different on each rank, the epoch will inconsistently progress and eventually lead to a
hang in all-reduce" (maintainer, awaelchli). The skipping rank also skips the step's backward (the
DDP gradient all-reduce) and the step's `self.log(..., sync_dist=True)` reduction that the other
ranks issue.
Fix (the PR, merged): Lightning now raises when `training_step` returns None in distributed
training; the user keeps every rank in the step -- here, a zero loss that still flows through the
graph when a crop has no labelled pixel.
Expected rankcheck finding: RC102 on the per-rank `return None` before the synced `self.log` and the
backward.
(The segmentation task is reconstructed; the PR is about the pattern, not one reporter's model.)
"""
import argparse

import lightning as L
import torch
import torch.nn.functional as F


class SegmentationModule(L.LightningModule):
    def __init__(self, net: torch.nn.Module, num_classes: int, ignore_index: int = 255, lr: float = 1e-3):
        super().__init__()
        self.net = net
        self.num_classes = num_classes
        self.ignore_index = ignore_index
        self.lr = lr

    def forward(self, images):
        return self.net(images)

    def training_step(self, batch, batch_idx):
        images, masks = batch
        labelled = (masks != self.ignore_index).sum()
        if labelled == 0:
            # crop fell entirely on unlabelled background: nothing to learn from
            return None  # expect: RC102
        logits = self(images)
        loss = F.cross_entropy(logits, masks, ignore_index=self.ignore_index)
        self.log("train/loss", loss, on_step=True, on_epoch=True, prog_bar=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        images, masks = batch
        logits = self(images)
        loss = F.cross_entropy(logits, masks, ignore_index=self.ignore_index)
        self.log("val/loss", loss, on_epoch=True, sync_dist=True)

    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=self.lr, weight_decay=1e-4)
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=self.trainer.max_epochs)
        return [optimizer], [scheduler]


def main(net, datamodule):
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-classes", type=int, default=19)
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=100)
    args = parser.parse_args()
    model = SegmentationModule(net, num_classes=args.num_classes)
    trainer = L.Trainer(accelerator="gpu", devices=args.devices, strategy="ddp", max_epochs=args.epochs)
    trainer.fit(model, datamodule=datamodule)
