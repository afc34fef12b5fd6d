"""Supervised aframe model (reconstruction of projects/train/train/model/{base,supervised}.py)."""
import lightning.pytorch as pl
import torch
import torch.nn as nn


class ResNet1D(nn.Module):
    def __init__(self, num_ifos=2, channels=32, layers=4):
        super().__init__()
        blocks, c_in = [], num_ifos
        for _ in range(layers):
            blocks += [nn.Conv1d(c_in, channels, 7, stride=2, padding=3), nn.BatchNorm1d(channels), nn.ReLU()]
            c_in = channels
        self.body = nn.Sequential(*blocks, nn.AdaptiveAvgPool1d(1), nn.Flatten())
        self.head = nn.Linear(channels, 1)

    def forward(self, x):
        return self.head(self.body(x))[:, 0]


class SupervisedAframe(pl.LightningModule):
    def __init__(self, learning_rate=1e-3, kernel_size=3072):
        super().__init__()
        self.save_hyperparameters()
        self.model = ResNet1D()

    def forward(self, X):
        return self.model(X)

    def training_step(self, batch, _):
        X, y = batch
        loss = nn.functional.binary_cross_entropy_with_logits(self(X), y)
        self.log("train_loss", loss, on_step=True, sync_dist=True)
        return loss

    def _windows(self, X):
        k = self.hparams.kernel_size
        return X.unfold(-1, k, k // 2).permute(2, 0, 1, 3).reshape(-1, X.size(0), k).transpose(0, 1)

    def validation_step(self, batch, _):
        X_bg, (X_inj,) = batch
        y_bg = self(self._windows(X_bg)[0])
        y_fg = self(X_inj[..., : self.hparams.kernel_size])
        # fraction of injections scored above the loudest background event in this batch
        score = (y_fg > y_bg.max()).float().mean()
        self.log(  # expect: RC103
            "valid_auroc",
            score,
            on_step=True,
            on_epoch=True,
            sync_dist=True,
        )

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.learning_rate)
