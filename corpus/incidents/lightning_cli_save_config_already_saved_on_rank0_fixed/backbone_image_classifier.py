"""MNIST image classifier with a pluggable backbone, configured and run through LightningCLI with
`run=False` (Lightning's examples/pl_basics/backbone_image_classifier.py), launched on two GPUs
with `--trainer.accelerator=gpu --trainer.devices=2 --trainer.strategy=ddp`, with the
`SaveConfigCallback` as merged in pytorch-lightning#14927: the "already saved" flag is broadcast
from rank 0, so every rank skips the later `setup` calls together.

Thread: https://github.com/Lightning-AI/pytorch-lightning/pull/14927 ("An instance of
SaveConfigCallback should only save the config once", merged)
Project: Lightning-AI/pytorch-lightning (src/pytorch_lightning/cli.py, `SaveConfigCallback.setup`)
Fix (awaelchli, merged into the PR): `self.already_saved = trainer.strategy.broadcast(
self.already_saved)` at the end of `setup`, "so that all ranks are in sync on future calls".
Expected rankcheck finding: none (safe twin).
(Inferred: which example hung in the GPU CI and its launch flags; this one runs fit, test and
predict on one CLI trainer, as the examples of that release did.)
"""
from typing import Optional

import torch
import torch.nn.functional as F
from pytorch_lightning import LightningDataModule, LightningModule
from torch.utils.data import DataLoader, random_split
from torchvision import transforms
from torchvision.datasets import MNIST

from pl_cli_lite import LightningCLI

DATASETS_PATH = "./Datasets"


class Backbone(torch.nn.Module):
    def __init__(self, hidden_dim: int = 128):
        super().__init__()
        self.l1 = torch.nn.Linear(28 * 28, hidden_dim)
        self.l2 = torch.nn.Linear(hidden_dim, 10)

    def forward(self, x):
        x = x.view(x.size(0), -1)
        x = torch.relu(self.l1(x))
        return torch.relu(self.l2(x))


class LitClassifier(LightningModule):
    def __init__(self, backbone: Optional[Backbone] = None, learning_rate: float = 0.0001):
        super().__init__()
        self.save_hyperparameters(ignore=["backbone"])
        if backbone is None:
            backbone = Backbone()
        self.backbone = backbone

    def forward(self, x):
        # use forward for inference/predictions
        return self.backbone(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss, on_epoch=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("valid_loss", F.cross_entropy(self(x), y), on_step=True)

    def test_step(self, batch, batch_idx):
        x, y = batch
        self.log("test_loss", F.cross_entropy(self(x), y))

    def predict_step(self, batch, batch_idx, dataloader_idx=None):
        x, _ = batch
        return self(x)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.learning_rate)


class MyDataModule(LightningDataModule):
    def __init__(self, batch_size: int = 32):
        super().__init__()
        dataset = MNIST(DATASETS_PATH, train=True, download=True, transform=transforms.ToTensor())
        self.mnist_test = MNIST(DATASETS_PATH, train=False, download=True, transform=transforms.ToTensor())
        self.mnist_train, self.mnist_val = random_split(dataset, [55000, 5000])
        self.batch_size = batch_size

    def train_dataloader(self):
        return DataLoader(self.mnist_train, batch_size=self.batch_size)

    def val_dataloader(self):
        return DataLoader(self.mnist_val, batch_size=self.batch_size)

    def test_dataloader(self):
        return DataLoader(self.mnist_test, batch_size=self.batch_size)

    def predict_dataloader(self):
        return DataLoader(self.mnist_test, batch_size=self.batch_size)


def cli_main():
    cli = LightningCLI(
        LitClassifier, MyDataModule, seed_everything_default=1234, save_config_overwrite=True, run=False
    )
    cli.trainer.fit(cli.model, datamodule=cli.datamodule)
    cli.trainer.test(ckpt_path="best", datamodule=cli.datamodule)
    predictions = cli.trainer.predict(ckpt_path="best", datamodule=cli.datamodule)
    print(predictions[0])


if __name__ == "__main__":
    cli_main()
