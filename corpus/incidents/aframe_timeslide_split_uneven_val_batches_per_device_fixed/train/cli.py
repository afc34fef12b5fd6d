"""Aframe (gravitational-wave detection) training entry point, multi-GPU DDP with Lightning.

Thread: https://github.com/ML4GW/aframe/issues/124 ("Validation score inconsistency when using DDP
training", closed)
Project: ML4GW/aframe (projects/train/train/metrics.py, data/base.py, model/supervised.py)
What hung: "Towards the beginning of adopting lightning, I was encountering issues with the training
process hanging at the end of the first validation step due to the validation dataloaders being of
different lengths on different GPUs. This issue was in part due to the (relatively) complex way we go
about splitting validation segments." `get_timeslides` splits the background timeslides so that each
device gets "roughly an equal number of steps", but every timeslide rounds its own last batch up, so
the devices get different numbers of batches; Lightning's validation loop then runs a different
number of `validation_step`s per device, and each one all-reduces the logged score
(`sync_dist=True`, `on_step=True`) and runs the DDP-wrapped forward (BatchNorm buffer broadcast).
Fix: the maintainer "resolved this in an extremely hacky way by setting the minimum length of all the
GPU validation dataloaders": `get_timeslides` computes every device's batch count and returns the
minimum ("this is a hack to get around the fact that the timeslides in total don't combine to the same
number of batches, leading to hanging when validating with distributed training"), which
`val_dataloader` uses as the `ZippedDataset` length.
Fixed twin: `get_timeslides` returns the minimum batch count over the devices, so every device
runs the same number of validation steps. Expected rankcheck finding: none.
Inferred: the model, the per-batch score (aframe logs its TimeSlideAUROC metric object) and the
CLI are written for this reconstruction; the timeslide split follows metrics.py in the repository.
"""
import argparse

import lightning.pytorch as pl
import torch

from train.data.base import BaseAframeDataset
from train.model.supervised import SupervisedAframe


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--background", required=True, help="torch file with (n_segments, 2, n_samples)")
    parser.add_argument("--waveforms", required=True, help="torch file with validation injections")
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--max_epochs", type=int, default=200)
    args = parser.parse_args()

    datamodule = BaseAframeDataset(torch.load(args.background), torch.load(args.waveforms))
    model = SupervisedAframe()
    trainer = pl.Trainer(accelerator="gpu", devices=args.devices, strategy="ddp",
                         max_epochs=args.max_epochs, check_val_every_n_epoch=1)
    trainer.fit(model, datamodule=datamodule)


if __name__ == "__main__":
    main()
