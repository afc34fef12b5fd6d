"""Fault-tolerant launcher for a Lightning job: `trainer.fit` is wrapped in try/except, and on any
exception the handler writes an emergency checkpoint before re-raising.

Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/6430 ("Expected behavior when 1 rank crashes in distributed training?")
Project: Lightning-AI/pytorch-lightning
What hung: "we wrap the train loop in a try/catch and checkpoint if anything fails. This means if
one rank raises an exception but not all, that one rank goes through the checkpointing flow and
hangs when we try to broadcast the filename in the model checkpoint callback. This hang obscures
the primary error message." Saving a checkpoint is collective (broadcast of the path, barrier);
the failing rank alone entered it. (The thread describes Lightning's own train loop; the same
pattern is reconstructed here at the script level, where users write it.)
Fix (proposed in the follow-up, Lightning-AI/pytorch-lightning#6842): keep the checkpoint-on-exception path only for
KeyboardInterrupt, which every rank receives, and re-raise every other exception without running
collectives.
Expected rankcheck finding: RC105 on the `trainer.save_checkpoint(...)` in the exception handler.
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
    except Exception:
        log.exception("training failed, writing an emergency checkpoint")
        trainer.save_checkpoint(os.path.join(args.ckpt_dir, "on_exception.ckpt"))  # expect: RC105
        raise
