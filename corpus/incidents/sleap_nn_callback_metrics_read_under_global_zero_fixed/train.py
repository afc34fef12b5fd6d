"""Safe twin of sleap_nn_callback_metrics_read_under_global_zero/train.py: unchanged; the fix is in
callbacks.py.

Thread: https://github.com/talmolab/sleap-nn/pull/476 ("Move callback_metrics access before is_global_zero to fix DDP collective mismatch")
Project: talmolab/sleap-nn
Expected rankcheck finding: none.
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
