"""Safe twin of lightning_checkpoint_in_exception_handler.py: only a KeyboardInterrupt (delivered to
every rank) triggers the emergency checkpoint; any other exception is re-raised at once, without a
collective that the other ranks would never join.

Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/6430 (fix proposed in #6842)
"""
import argparse
import logging
import os

import lightning as L

log = logging.getLogger(__name__)


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ckpt_dir", default="checkpoints")
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--max_epochs", type=int, default=20)
    return parser.parse_args()


def run(model: L.LightningModule, datamodule: L.LightningDataModule):
    args = parse_args()
    trainer = L.Trainer(accelerator="gpu", devices=args.devices, strategy="ddp", max_epochs=args.max_epochs)
    try:
        trainer.fit(model, datamodule=datamodule)
    except KeyboardInterrupt:
        log.warning("interrupted, writing a checkpoint before exiting")
        trainer.save_checkpoint(os.path.join(args.ckpt_dir, "interrupted.ckpt"))
        raise
