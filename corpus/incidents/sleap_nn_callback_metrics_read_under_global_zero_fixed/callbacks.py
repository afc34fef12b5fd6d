"""Safe twin of sleap_nn_callback_metrics_read_under_global_zero/callbacks.py: every rank reads
`trainer.callback_metrics` before the `is_global_zero` guard, so all of them take part in the
all-reduce it triggers; the CSV write and the ZMQ messages stay on global rank 0.

Thread: https://github.com/talmolab/sleap-nn/pull/476 ("Move callback_metrics access before is_global_zero to fix DDP collective mismatch")
Project: talmolab/sleap-nn
Expected rankcheck finding: none.
"""
import csv
from pathlib import Path

import jsonpickle
import zmq
from lightning.pytorch.callbacks import Callback


class CSVLoggerCallback(Callback):
    def __init__(self, filepath: Path, keys=("epoch", "train_loss", "val_loss", "learning_rate")):
        super().__init__()
        self.filepath = Path(filepath)
        self.keys = list(keys)
        self.initialized = False

    def _init_file(self):
        self.filepath.parent.mkdir(parents=True, exist_ok=True)
        with open(self.filepath, "w", newline="") as f:
            csv.DictWriter(f, fieldnames=self.keys).writeheader()
        self.initialized = True

    def on_validation_epoch_end(self, trainer, pl_module):
        # Every rank reads callback_metrics: the first read all-reduces the sync_dist metrics.
        metrics = trainer.callback_metrics
        if trainer.is_global_zero:
            if not self.initialized:
                self._init_file()
            row = {"epoch": trainer.current_epoch}
            for key in self.keys[1:]:
                value = metrics.get("train/lr" if key == "learning_rate" else key)
                row[key] = value.item() if value is not None else None
            with open(self.filepath, "a", newline="") as f:
                csv.DictWriter(f, fieldnames=self.keys).writerow(row)
        trainer.strategy.barrier()


class ProgressReporterZMQ(Callback):
    def __init__(self, address: str = "tcp://127.0.0.1:9001", what: str = "centroid"):
        super().__init__()
        self.what = what
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.PUB)
        self.socket.connect(address)

    def send(self, event: str, logs=None, **kwargs):
        self.socket.send_string(jsonpickle.encode(dict(what=self.what, event=event, logs=logs, **kwargs)))

    @staticmethod
    def _to_floats(logs):
        return {k: float(v.item()) if hasattr(v, "item") else v for k, v in logs.items()}

    def on_train_epoch_end(self, trainer, pl_module):
        logs = trainer.callback_metrics
        if trainer.is_global_zero:
            self.send("epoch_end", epoch=trainer.current_epoch, logs=self._to_floats(logs))
        trainer.strategy.barrier()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        logs = trainer.callback_metrics
        if trainer.is_global_zero:
            self.send("batch_end", epoch=trainer.current_epoch, batch=batch_idx, logs=self._to_floats(logs))
        trainer.strategy.barrier()
