"""Fine-tuning an image classifier on a long-tailed species dataset (many unbalanced classes) with
PyTorch Lightning on several GPUs, after the fix of Lightning#2724: the `ConfusionMatrix` metric is
given the number of classes, so every process all-reduces a matrix of the same size.

Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/2724 ("Issues with Confusion Matrix
normalization and DDP computation"), closed by https://github.com/Lightning-AI/pytorch-lightning/pull/3465
(merged, "Also fixes #2724")
Project: Lightning-AI/pytorch-lightning (pytorch_lightning/metrics/classification.py,
pytorch_lightning/metrics/functional/classification.py)
Fix (the class metric as it stood after the PR, Lightning 0.9/0.10): `ConfusionMatrix(num_classes=...)`
passes the number of classes to the functional, which sizes the matrix from it on every process, and
the normalization moves after the DDP sync.
Expected rankcheck finding: none (safe twin).
(Trimmed: the metrics package is reduced to the classes used here. Inferred: the dataset (an
ImageFolder of a long-tailed species collection) and the model; the reporter names only "a large
number of unbalanced classes" and a small `limit_val_batches` as the conditions.)
"""
import argparse
import os

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader
from torchvision import transforms

from pl_metrics_lite import Accuracy, ConfusionMatrix


class SpeciesClassifier(pl.LightningModule):
    def __init__(self, hparams):
        super().__init__()
        self.hparams = hparams
        backbone = torchvision.models.resnet50(pretrained=True)
        backbone.fc = nn.Linear(backbone.fc.in_features, hparams.num_classes)
        self.model = backbone
        self.val_acc = Accuracy()
        self.val_confmat = ConfusionMatrix(num_classes=hparams.num_classes, normalize=True)

    def forward(self, x):
        return self.model(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        return {"loss": loss, "log": {"train_loss": loss}}

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        return {"val_loss": F.cross_entropy(logits, y), "preds": logits.argmax(dim=1), "target": y}

    def validation_epoch_end(self, outputs):
        preds = torch.cat([o["preds"] for o in outputs])
        target = torch.cat([o["target"] for o in outputs])
        val_loss = torch.stack([o["val_loss"] for o in outputs]).mean()
        acc = self.val_acc(preds, target) / max(self.trainer.world_size, 1)
        confmat = self.val_confmat(preds, target)
        if self.trainer.is_global_zero:
            torch.save(confmat.cpu(), os.path.join(self.hparams.out_dir, f"confmat_epoch{self.current_epoch}.pt"))
        return {"val_loss": val_loss, "log": {"val_loss": val_loss, "val_acc": acc}}

    def configure_optimizers(self):
        optimizer = torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9, weight_decay=1e-4)
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=self.hparams.max_epochs)
        return [optimizer], [scheduler]

    def train_dataloader(self):
        tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                                 transforms.ToTensor(),
                                 transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
        ds = torchvision.datasets.ImageFolder(os.path.join(self.hparams.data_dir, "train"), tf)
        return DataLoader(ds, batch_size=self.hparams.batch_size, shuffle=True, num_workers=8, pin_memory=True)

    def val_dataloader(self):
        tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(224), transforms.ToTensor(),
                                 transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])
        ds = torchvision.datasets.ImageFolder(os.path.join(self.hparams.data_dir, "val"), tf)
        return DataLoader(ds, batch_size=self.hparams.batch_size, shuffle=False, num_workers=8, pin_memory=True)


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_dir", default="data/species")
    parser.add_argument("--out_dir", default="outputs")
    parser.add_argument("--num_classes", type=int, default=312)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.01)
    parser = pl.Trainer.add_argparse_args(parser)
    return parser.parse_args()


def main():
    args = parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    model = SpeciesClassifier(args)
    trainer = pl.Trainer.from_argparse_args(args)
    trainer.fit(model)


if __name__ == "__main__":
    main()
