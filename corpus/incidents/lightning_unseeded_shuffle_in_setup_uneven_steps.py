"""Trajectory-prediction model trained with PyTorch Lightning (DDP on 4 GPUs). The DataModule
lists the recorded episodes, shuffles them, takes 90% for training and cuts every training episode
into fixed-length windows; Lightning wraps the resulting dataset in a DistributedSampler.

Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/10947 ("Distributed training hangs
at model checkpoint")
Project: Lightning-AI/pytorch-lightning
What hung: the shuffle in the dataset-loading function is unseeded. Under plain PyTorch it ran once,
but every Lightning DDP process calls setup() on its own, so each process shuffles differently,
picks a different set of training episodes and, since episodes have different lengths, gets a
different number of windows and so of steps per epoch (the reporter: "my random shuffle yields
different length of steps! And sometimes the hang would just gone due to luck"). A process that
finished its epoch went on to the ModelCheckpoint/validation collectives while the others were still
in training steps, and the run hung at the checkpoint.
Fix: the reporter's: shuffle with a static seed (or don't shuffle) so every process builds the same
split and the same dataset length.
Expected rankcheck finding: RC103 on the epoch-synced log in training_step, a collective inside
Lightning's per-rank training loop (there is no loop in user code).
Inferred: the data format (per-episode .npz files), the windowing, the model and the logging; the
thread shows none of the code. The script calls no seed_everything (with one, every process would
shuffle alike).
"""
import glob
import random

import lightning.pytorch as pl
import numpy as np
import torch
import torch.nn as nn
from lightning.pytorch.callbacks import ModelCheckpoint
from torch.utils.data import DataLoader, Dataset


class WindowDataset(Dataset):
    def __init__(self, episodes, window, horizon):
        self.items = []
        for path in episodes:
            traj = np.load(path)["states"].astype(np.float32)
            for start in range(0, len(traj) - window - horizon, window // 2):
                self.items.append((traj[start:start + window], traj[start + window:start + window + horizon]))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        past, future = self.items[idx]
        return torch.from_numpy(past), torch.from_numpy(future)


class EpisodeDataModule(pl.LightningDataModule):
    def __init__(self, root="data/episodes", window=32, horizon=16, batch_size=64):
        super().__init__()
        self.save_hyperparameters()

    def setup(self, stage=None):
        episodes = sorted(glob.glob(f"{self.hparams.root}/*.npz"))
        random.shuffle(episodes)
        n_train = int(0.9 * len(episodes))
        self.train_set = WindowDataset(episodes[:n_train], self.hparams.window, self.hparams.horizon)
        self.val_set = WindowDataset(episodes[n_train:], self.hparams.window, self.hparams.horizon)

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=self.hparams.batch_size, shuffle=True, num_workers=4)

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=self.hparams.batch_size, num_workers=4)


class TrajectoryPredictor(pl.LightningModule):
    def __init__(self, state_dim=12, hidden=256, horizon=16, lr=1e-3):
        super().__init__()
        self.save_hyperparameters()
        self.encoder = nn.GRU(state_dim, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, horizon * state_dim)

    def forward(self, past):
        _, h = self.encoder(past)
        return self.head(h[-1]).view(past.size(0), self.hparams.horizon, -1)

    def training_step(self, batch, batch_idx):
        past, future = batch
        loss = nn.functional.mse_loss(self(past), future)
        self.log("train_loss", loss, on_step=True, on_epoch=True, sync_dist=True)  # expect: RC103
        return loss

    def validation_step(self, batch, batch_idx):
        past, future = batch
        self.log("val_loss", nn.functional.mse_loss(self(past), future), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)


if __name__ == "__main__":
    trainer = pl.Trainer(
        accelerator="gpu", devices=4, strategy="ddp", max_epochs=100,
        callbacks=[ModelCheckpoint(monitor="val_loss", save_top_k=3, save_last=True)],
    )
    trainer.fit(TrajectoryPredictor(), datamodule=EpisodeDataModule())
