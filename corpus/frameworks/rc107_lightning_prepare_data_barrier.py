"""PENDING (hooks that run on one rank only): Lightning calls prepare_data on local rank 0 only
(prepare_data_per_node=True), so the strategy barrier inside it waits for ranks that never enter the
hook. It should be reported like a @rank_zero_only function (RC107 on the def line)."""
import os

import lightning.pytorch as pl
import torchvision


class MNISTDataModule(pl.LightningDataModule):
    def __init__(self, data_dir: str) -> None:
        super().__init__()
        self.data_dir = data_dir

    def prepare_data(self) -> None:  # expect: RC107
        torchvision.datasets.MNIST(self.data_dir, train=True, download=True)
        torchvision.datasets.MNIST(self.data_dir, train=False, download=True)
        self.trainer.strategy.barrier("mnist downloaded")

    def setup(self, stage: str) -> None:
        self.mnist_train = torchvision.datasets.MNIST(self.data_dir, train=True)
