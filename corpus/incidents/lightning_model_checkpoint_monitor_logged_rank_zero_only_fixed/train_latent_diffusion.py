"""Latent diffusion over molecule conformations trained with Lightning 2.1 DDP (`Trainer(
strategy="ddp", devices=4)`), launched through a Hydra entry point. The validation loss is logged
from the LightningModule and a ModelCheckpoint keeps the three best checkpoints by it, with the
value in the file name (`{epoch}-{step}-{val_loss:.4f}`).

Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/19045 ("Training hangs with DDP +
ModelCheckpoint Callback"; the documentation fix is Lightning-AI/pytorch-lightning#19056)
Project: Lightning (ModelCheckpoint; the trimmed copy is pl_callbacks_lite/model_checkpoint.py)
What hung: the maintainer's diagnosis: "The reason for the hang is because you set
`self.log(rank_zero_only=True)`, and so you are suppressing synchronization. Then, the monitor
values in the model checkpoint diverge, and now each rank has a different state of which checkpoint
is the 'best', leading to a disagreement and ultimately the code will hang here ... (infinite while
loop on some ranks but not on others)". Each rank monitored its own, unsynchronised validation loss,
so the file name and the checkpoint to replace (`del_filepath`) differed per rank, and the version
loop `while self.file_exists(filepath, trainer) and filepath != del_filepath:`, each of whose tests
broadcasts rank 0's answer, ran a different number of rounds per rank; the ranks that left it early
waited in `trainer.save_checkpoint`'s barrier while the others were still broadcasting.
Fix: the monitored metric is logged on every rank with `sync_dist=True` and without
`rank_zero_only=True` (the maintainer; #19056 rewrites the `rank_zero_only` docs: "Set this to
True only if you call self.log explicitly only from rank 0"), so every rank monitors the same value.
Expected rankcheck finding: none (safe twin: the monitored value is synchronised on every rank).
(Trimmed: the reporter's model and data modules are replaced by a small score network over
precomputed latents; Hydra configuration is reduced to argparse. The script passes the trimmed
ModelCheckpoint to the Trainer so that the copy is the one that runs.)
"""
import argparse

import lightning.pytorch as pl
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from pl_callbacks_lite import ModelCheckpoint


class ScoreNet(nn.Module):
    def __init__(self, latent_dim, hidden):
        super().__init__()
        self.time = nn.Sequential(nn.Linear(1, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.net = nn.Sequential(
            nn.Linear(latent_dim + hidden, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(),
            nn.Linear(hidden, latent_dim),
        )

    def forward(self, z, t):
        return self.net(torch.cat([z, self.time(t[:, None])], dim=-1))


class LatentDiffusion(pl.LightningModule):
    def __init__(self, latent_dim=64, hidden=512, lr=2e-4):
        super().__init__()
        self.save_hyperparameters()
        self.model = ScoreNet(latent_dim, hidden)

    def _loss(self, z0):
        t = torch.rand(z0.shape[0], device=z0.device)
        noise = torch.randn_like(z0)
        alpha = torch.cos(t * torch.pi / 2)[:, None]
        sigma = torch.sin(t * torch.pi / 2)[:, None]
        zt = alpha * z0 + sigma * noise
        return nn.functional.mse_loss(self.model(zt, t), noise)

    def training_step(self, batch, batch_idx):
        (z0,) = batch
        loss = self._loss(z0)
        self.log("train_loss", loss, on_step=True, prog_bar=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        (z0,) = batch
        loss = self._loss(z0)
        self.log("val_loss", loss, on_epoch=True, prog_bar=True, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=1e-4)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--train-latents", default="data/train_latents.pt")
    p.add_argument("--val-latents", default="data/val_latents.pt")
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--max-epochs", type=int, default=500)
    p.add_argument("--devices", type=int, default=4)
    p.add_argument("--ckpt-dir", default="checkpoints/latent_diffusion")
    return p.parse_args()


def main():
    args = parse_args()
    train = DataLoader(TensorDataset(torch.load(args.train_latents)), batch_size=args.batch_size, shuffle=True,
                       num_workers=4)
    val = DataLoader(TensorDataset(torch.load(args.val_latents)), batch_size=args.batch_size, num_workers=4)
    checkpoint = ModelCheckpoint(
        dirpath=args.ckpt_dir,
        filename="{epoch}-{step}-{val_loss:.4f}",
        monitor="val_loss",
        save_top_k=3,
        mode="min",
    )
    trainer = pl.Trainer(
        accelerator="gpu",
        devices=args.devices,
        strategy="ddp",
        max_epochs=args.max_epochs,
        callbacks=[checkpoint],
        log_every_n_steps=20,
    )
    trainer.fit(LatentDiffusion(), train, val)


if __name__ == "__main__":
    main()
