"""Training callbacks of a sleap-nn style trainer: a CSV logger and a ZMQ progress reporter (the GUI
listens to it). Only global rank 0 writes the file or publishes a message, and every hook ends with
a strategy barrier so the other ranks wait for that I/O.

Thread: https://github.com/talmolab/sleap-nn/pull/476 ("Move callback_metrics access before is_global_zero to fix DDP collective mismatch")
Project: talmolab/sleap-nn
What hung: "Since only rank 0 enters the guard, rank 1 hits a `barrier` instead -- ALLREDUCE on
rank 0 vs BARRIER on rank 1." With TORCH_DISTRIBUTED_DEBUG=DETAIL the run stops at the sanity
check with "Detected mismatch between collectives on ranks"; without it NCCL is left in undefined
behaviour.
Fix (the PR, merged): read `metrics = trainer.callback_metrics` / `logs = trainer.callback_metrics`
before the `is_global_zero` guard in `CSVLoggerCallback.on_validation_epoch_end`,
`ProgressReporterZMQ.on_train_epoch_end` and `ProgressReporterZMQ.on_train_batch_end`; "The fix
keeps all I/O rank-0-only while ensuring the collective operation runs symmetrically on all ranks".
Expected rankcheck finding: RC101 on each of the three `trainer.callback_metrics` reads inside
`if trainer.is_global_zero:` (a property read, not a call, that reaches the metrics all-reduce).
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
        if trainer.is_global_zero:
            if not self.initialized:
                self._init_file()
            metrics = trainer.callback_metrics  # expect: RC101
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
        if trainer.is_global_zero:
            logs = trainer.callback_metrics  # expect: RC101
            self.send("epoch_end", epoch=trainer.current_epoch, logs=self._to_floats(logs))
        trainer.strategy.barrier()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if trainer.is_global_zero:
            logs = trainer.callback_metrics  # expect: RC101
            self.send("batch_end", epoch=trainer.current_epoch, batch=batch_idx, logs=self._to_floats(logs))
        trainer.strategy.barrier()
