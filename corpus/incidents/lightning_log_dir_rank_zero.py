"""Reconstruction of https://github.com/Lightning-AI/pytorch-lightning/issues/18148

Project: Lightning-AI/pytorch-lightning (Trainer.log_dir under DDP).
What hung: a LightningModule hook decorated with @rank_zero_only read
`self.trainer.log_dir` to write run files. Trainer.log_dir is not a plain
attribute: it resolves the logger directory and then calls
`self.strategy.broadcast(dirpath)` so every rank agrees on the path. Only rank 0
ran the hook, so rank 0 issued a broadcast that the other ranks never matched;
the collectives fell out of step and the run froze after the first training
step. Maintainer (awaelchli) answered with PR #18179, which documents on
Trainer.log_dir: "You must call this on all processes. Failing to do so will
cause your program to stall forever."
Fix: read trainer.log_dir on every rank; keep only the file writing on rank 0.
The hparams file and sample folder written in the hook are inferred details.
expected: RC101 at line 54
"""
import argparse
import json
import os

import lightning.pytorch as pl
import torch
from lightning.pytorch.loggers import TensorBoardLogger
from lightning.pytorch.utilities import rank_zero_only
from torch.utils.data import DataLoader, Dataset


class RandomDataset(Dataset):
    def __init__(self, size, length):
        self.len = length
        self.data = torch.randn(length, size)

    def __getitem__(self, index):
        return self.data[index]

    def __len__(self):
        return self.len


class BoringModel(pl.LightningModule):
    def __init__(self, lr=0.1, hidden=32):
        super().__init__()
        self.save_hyperparameters()
        self.layer = torch.nn.Linear(hidden, 2)

    def forward(self, x):
        return self.layer(x)

    def loss(self, prediction):
        return torch.nn.functional.mse_loss(prediction, torch.ones_like(prediction))

    @rank_zero_only
    def on_fit_start(self):
        run_dir = self.trainer.log_dir  # expect: RC101
        os.makedirs(os.path.join(run_dir, "samples"), exist_ok=True)
        with open(os.path.join(run_dir, "run_config.json"), "w") as f:
            json.dump(dict(self.hparams), f, indent=2)

    def training_step(self, batch, batch_idx):
        loss = self.loss(self(batch))
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        loss = self.loss(self(batch))
        self.log("valid_loss", loss, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.layer.parameters(), lr=self.hparams.lr)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--devices", type=int, default=2)
    parser.add_argument("--max_epochs", type=int, default=5)
    parser.add_argument("--save_dir", default="lightning_logs_boring")
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()

    train_data = DataLoader(RandomDataset(32, 640), batch_size=2)
    val_data = DataLoader(RandomDataset(32, 64), batch_size=2)

    model = BoringModel(lr=args.lr)
    trainer = pl.Trainer(
        accelerator="gpu",
        devices=args.devices,
        strategy="ddp",
        max_epochs=args.max_epochs,
        logger=TensorBoardLogger(save_dir=args.save_dir),
        enable_model_summary=False,
    )
    trainer.fit(model, train_dataloaders=train_data, val_dataloaders=val_data)


if __name__ == "__main__":
    main()
