"""Lightning callbacks of a sleap-nn style trainer that the SLEAP GUI (or a remote-training bridge)
drives over ZMQ: a controller that listens for a "stop" command (the GUI's Stop Early button) and
a reporter that publishes progress; the trainer is built with them under DDP.

Thread: https://github.com/talmolab/sleap-nn/pull/471 ("Fix TrainingControllerZMQ DDP stop: use reduce_boolean_decision"), diagnosed in talmolab/sleap-rtc#49
Project: talmolab/sleap-nn
What hung: "When a Stop Early command is forwarded as a ZMQ message to `TrainingControllerZMQ`, the
callback's use of `barrier()` instead of `reduce_boolean_decision` causes a ... NCCL deadlock on
multi-GPU workers." Rank 0 (`is_global_zero`) receives the message and sets
`trainer.should_stop = True`; the barrier lines the ranks up in time but "does not propagate the
value of `trainer.should_stop`", so after it rank 0 leaves the fit loop while the other ranks
start the next batch and wait in its collectives.
Fix (the PR, merged): replace the barrier with
`trainer.should_stop = trainer.strategy.reduce_boolean_decision(trainer.should_stop, all=False)`,
so every rank stops when any rank was told to.
Expected rankcheck finding: RC102 on `trainer.should_stop = True`, the statement that makes rank 0
alone leave Lightning's training loop.
"""
import argparse

import jsonpickle
import lightning as L
import zmq
from lightning.pytorch.callbacks import Callback, ModelCheckpoint
from loguru import logger


class TrainingControllerZMQ(Callback):
    """Receives control commands (stop early) published by the GUI on a ZMQ SUB socket."""

    def __init__(self, address="tcp://127.0.0.1:9000", topic="", poll_timeout=10):
        super().__init__()
        self.address = address
        self.topic = topic
        self.timeout = poll_timeout
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.SUB)
        self.socket.subscribe(self.topic)
        self.socket.connect(self.address)
        logger.info(f"Training controller subscribed to: {self.address} (topic: {self.topic})")

    def __del__(self):
        self.socket.close()
        self.context.term()

    def _next_command(self):
        """The next command published by the GUI, or None if nothing arrived within the timeout."""
        if not self.socket.poll(self.timeout, zmq.POLLIN):
            return None
        message = jsonpickle.decode(self.socket.recv_string())
        logger.info(f"Training controller received: {message}")
        return message.get("command")

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if trainer.is_global_zero:
            command = self._next_command()
            if command == "stop":
                trainer.should_stop = True  # expect: RC102

        # Sync all processes after the ZMQ poll.
        trainer.strategy.barrier()


class ProgressReporterZMQ(Callback):
    """Publishes training events to the GUI's loss viewer on a ZMQ PUB socket."""

    def __init__(self, address="tcp://127.0.0.1:9001", what=""):
        super().__init__()
        self.address = address
        self.what = what
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.PUB)
        self.socket.connect(self.address)

    def send(self, event: str, logs=None, **kwargs):
        self.socket.send_string(jsonpickle.encode(dict(what=self.what, event=event, logs=logs, **kwargs)))

    def on_train_start(self, trainer, pl_module):
        if trainer.is_global_zero:
            self.send("train_begin")
        trainer.strategy.barrier()

    def on_train_end(self, trainer, pl_module):
        if trainer.is_global_zero:
            self.send("train_end")
        trainer.strategy.barrier()

    def on_train_epoch_start(self, trainer, pl_module):
        if trainer.is_global_zero:
            self.send("epoch_begin", epoch=trainer.current_epoch)
        trainer.strategy.barrier()


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--devices", type=int, default=2)
    parser.add_argument("--max_epochs", type=int, default=200)
    parser.add_argument("--controller_address", default="tcp://127.0.0.1:9000")
    parser.add_argument("--publish_address", default="tcp://127.0.0.1:9001")
    parser.add_argument("--ckpt_dir", default="models/centroid")
    return parser.parse_args()


def train(model: L.LightningModule, datamodule: L.LightningDataModule):
    args = parse_args()
    callbacks = [
        ModelCheckpoint(dirpath=args.ckpt_dir, monitor="val_loss", save_top_k=1, save_last=True),
        TrainingControllerZMQ(address=args.controller_address),
        ProgressReporterZMQ(address=args.publish_address, what="centroid"),
    ]
    trainer = L.Trainer(
        accelerator="gpu",
        devices=args.devices,
        strategy="ddp",
        max_epochs=args.max_epochs,
        callbacks=callbacks,
    )
    trainer.fit(model, datamodule=datamodule)
