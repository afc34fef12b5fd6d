"""Entry point of a sleap-nn style training run on two GPUs with Lightning's DDP strategy: builds
the model, the callbacks (CSV logger, ZMQ progress reporter, checkpointing on `val_loss`) and fits.

Thread: https://github.com/talmolab/sleap-nn/pull/476 ("Move callback_metrics access before is_global_zero to fix DDP collective mismatch")
Project: talmolab/sleap-nn
What hung: "Crashes immediately at sanity check with: RuntimeError: Detected mismatch between
collectives on ranks." (`sleap-nn train` with `trainer_devices: 2` under TORCH_DISTRIBUTED_DEBUG=DETAIL)
Fix (the PR, merged): the callbacks read `trainer.callback_metrics` on every rank; nothing changes here.
Expected rankcheck finding: none in this module; RC101 in callbacks.py.
"""
import argparse
from pathlib import Path

import lightning as L
from lightning.pytorch.callbacks import ModelCheckpoint

from callbacks import CSVLoggerCallback, ProgressReporterZMQ
from model import SingleInstanceModel


def main(build_backbone, build_head, build_datamodule):
    parser = argparse.ArgumentParser()
    parser.add_argument("--run-dir", type=Path, default=Path("models/centroid"))
    parser.add_argument("--devices", type=int, default=2)
    parser.add_argument("--max-epochs", type=int, default=200)
    parser.add_argument("--zmq-address", default="tcp://127.0.0.1:9001")
    args = parser.parse_args()

    model = SingleInstanceModel(build_backbone(), build_head())
    callbacks = [
        CSVLoggerCallback(args.run_dir / "training_log.csv"),
        ProgressReporterZMQ(address=args.zmq_address, what="centroid"),
        ModelCheckpoint(dirpath=args.run_dir, monitor="val_loss", save_top_k=1, filename="best"),
    ]
    trainer = L.Trainer(
        accelerator="gpu",
        devices=args.devices,
        strategy="ddp",
        max_epochs=args.max_epochs,
        callbacks=callbacks,
        num_sanity_val_steps=2,
    )
    trainer.fit(model, datamodule=build_datamodule())
