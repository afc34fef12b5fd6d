"""Safe twin of lightning_training_step_returns_none_on_unlabelled_crop: every rank runs the step; a
crop with no labelled pixel yields a zero loss that still flows through the graph, so the backward
and the synced log happen on every rank.

Thread: https://github.com/Lightning-AI/pytorch-lightning/pull/19918
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
        logits = self(images)
        per_pixel = F.cross_entropy(logits, masks, ignore_index=self.ignore_index, reduction="sum")
        loss = per_pixel / labelled.clamp(min=1)
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
