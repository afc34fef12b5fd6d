"""Safe twin of lightning_threshold_stopping_per_process_val_acc (Lightning#379): the stop decision
is all-reduced across the DDP processes before it is returned to the Trainer -- the rule Lightning's
own EarlyStopping adopted ("stop every ddp process if any world process decides to stop") -- so every
process leaves the epoch loop at the same epoch.
"""
import os
from argparse import ArgumentParser
from collections import OrderedDict

import numpy as np
import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.transforms as transforms
from pytorch_lightning import Trainer
from pytorch_lightning.callbacks import EarlyStopping
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision.datasets import MNIST


class ThresholdStopping(EarlyStopping):
    """Stops as soon as the monitored quantity passes a fixed threshold."""

    def __init__(self, monitor="val_acc", thresh=0.0, mode="max", verbose=0):
        super().__init__()
        self.monitor = monitor
        self.thresh = thresh
        self.verbose = verbose
        self.stopped_epoch = 0
        if mode not in ("auto", "min", "max"):
            print(f"EarlyStopping mode {mode} is unknown, fallback to auto mode.")
            mode = "auto"
        if mode == "min":
            self.monitor_op = np.less
        elif mode == "max":
            self.monitor_op = np.greater
        else:
            self.monitor_op = np.greater if "acc" in self.monitor else np.less

    def on_epoch_end(self, epoch, logs=None):
        current = logs.get(self.monitor)
        if current is None:
            print(f"Early stopping conditioned on metric `{self.monitor}` which is not available")
            return False
        stop_training = False
        if self.monitor_op(current, self.thresh):
            self.stopped_epoch = epoch
            stop_training = True
            if self.verbose > 0:
                print(f"Epoch {epoch + 1}: {self.monitor} {current:.4f} passed {self.thresh}, stopping")
        return self._stop_distributed_training(stop_training)

    @staticmethod
    def _stop_distributed_training(stop_training):
        # in ddp every process must stop when one of them is flagged
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            stop = torch.tensor(int(stop_training), device=torch.cuda.current_device())
            torch.distributed.all_reduce(stop, op=torch.distributed.ReduceOp.SUM)
            stop_training = stop.item() > 0
        return stop_training


class LightningTemplateModel(pl.LightningModule):
    def __init__(self, hparams):
        super().__init__()
        self.hparams = hparams
        self.batch_size = hparams.batch_size
        self.c_d1 = nn.Linear(28 * 28, hparams.hidden_dim)
        self.c_d1_bn = nn.BatchNorm1d(hparams.hidden_dim)
        self.c_d1_drop = nn.Dropout(hparams.drop_prob)
        self.c_d2 = nn.Linear(hparams.hidden_dim, 10)

    def forward(self, x):
        x = self.c_d1(x.view(x.size(0), -1))
        x = torch.tanh(x)
        x = self.c_d1_bn(x)
        x = self.c_d1_drop(x)
        return F.log_softmax(self.c_d2(x), dim=1)

    def training_step(self, batch, batch_nb):
        x, y = batch
        loss = F.nll_loss(self.forward(x), y)
        tqdm_dict = {"train_loss": loss}
        return OrderedDict({"loss": loss, "progress_bar": tqdm_dict, "log": tqdm_dict})

    def validation_step(self, batch, batch_nb):
        x, y = batch
        y_hat = self.forward(x)
        val_loss = F.nll_loss(y_hat, y)
        val_acc = torch.sum(y == torch.argmax(y_hat, dim=1)).item() / (len(y) * 1.0)
        return OrderedDict({"val_loss": val_loss, "val_acc": torch.tensor(val_acc, device=val_loss.device)})

    def validation_end(self, outputs):
        val_loss_mean = torch.stack([o["val_loss"] for o in outputs]).mean()
        val_acc_mean = torch.stack([o["val_acc"] for o in outputs]).mean()
        tqdm_dict = {"val_loss": val_loss_mean, "val_acc": val_acc_mean}
        return {"progress_bar": tqdm_dict, "log": tqdm_dict, "val_acc": val_acc_mean}

    def configure_optimizers(self):
        optimizer = torch.optim.Adam(self.parameters(), lr=self.hparams.learning_rate)
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=10)
        return [optimizer], [scheduler]

    def __dataloader(self, train):
        transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5,), (1.0,))])
        dataset = MNIST(root=self.hparams.data_root, train=train, transform=transform, download=True)
        sampler = DistributedSampler(dataset) if self.trainer.use_ddp else None
        return DataLoader(dataset, batch_size=self.batch_size, shuffle=sampler is None and train,
                          sampler=sampler, num_workers=2)

    @pl.data_loader
    def train_dataloader(self):
        return self.__dataloader(train=True)

    @pl.data_loader
    def val_dataloader(self):
        return self.__dataloader(train=False)


def main():
    parser = ArgumentParser()
    parser.add_argument("--data_root", default=os.path.join(os.getcwd(), "mnist"))
    parser.add_argument("--gpus", default="0,1")
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--hidden_dim", type=int, default=50000)
    parser.add_argument("--drop_prob", type=float, default=0.2)
    parser.add_argument("--learning_rate", type=float, default=0.001)
    parser.add_argument("--val_acc_threshold", type=float, default=0.97)
    parser.add_argument("--max_nb_epochs", type=int, default=50)
    hparams = parser.parse_args()

    model = LightningTemplateModel(hparams)
    early_stop = ThresholdStopping(monitor="val_acc", thresh=hparams.val_acc_threshold, mode="max", verbose=1)
    trainer = Trainer(
        gpus=[int(g) for g in hparams.gpus.split(",")],
        distributed_backend="ddp",
        early_stop_callback=early_stop,
        max_nb_epochs=hparams.max_nb_epochs,
    )
    trainer.fit(model)


if __name__ == "__main__":
    main()
