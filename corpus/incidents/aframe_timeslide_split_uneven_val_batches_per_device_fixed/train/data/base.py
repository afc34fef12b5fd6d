"""Validation data of the aframe datamodule (reconstruction of projects/train/train/data/base.py)."""
import lightning.pytorch as pl
import torch

from train.metrics import get_timeslides


class ZippedDataset(torch.utils.data.IterableDataset):
    """Zip background timeslide batches with injection batches, `minimum` batches long."""

    def __init__(self, *datasets, minimum=None):
        self.datasets = datasets
        self.minimum = minimum

    def __len__(self):
        return self.minimum

    def __iter__(self):
        for i, batch in enumerate(zip(*self.datasets)):
            if i >= self.minimum:
                break
            yield batch


class BaseAframeDataset(pl.LightningDataModule):
    def __init__(self, valid_background, val_waveforms, sample_rate=2048, kernel_length=1.5,
                 valid_livetime=3600 * 24, valid_stride=0.5, batch_size=512):
        super().__init__()
        self.save_hyperparameters(ignore=["valid_background", "val_waveforms"])
        self.valid_background = valid_background
        self.all_val_waveforms = val_waveforms
        self.val_batch_size = 4 * batch_size

    def setup(self, stage=None):
        world_size = self.trainer.world_size
        rank = self.trainer.global_rank
        self.timeslides, self.valid_loader_length = get_timeslides(
            self.valid_background,
            self.hparams.valid_livetime,
            self.hparams.sample_rate,
            self.hparams.kernel_length,
            self.hparams.valid_stride,
            self.val_batch_size,
        )
        self.val_waveforms = self.all_val_waveforms[rank::world_size]

    def val_dataloader(self):
        background = pl.utilities.combined_loader.CombinedLoader(self.timeslides, mode="sequential")
        iter(background)
        num_waveforms = len(self.val_waveforms)
        signal_batch_size = (num_waveforms - 1) // self.valid_loader_length + 1
        signal_loader = torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(self.val_waveforms), batch_size=signal_batch_size, shuffle=False
        )
        return ZippedDataset(background, signal_loader,
                             minimum=min(self.valid_loader_length, len(signal_loader)))
