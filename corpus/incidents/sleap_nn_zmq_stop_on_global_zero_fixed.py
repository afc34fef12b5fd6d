"""Safe twin of sleap_nn_zmq_stop_on_global_zero.py: as in sleap-nn#471, after rank 0 has polled the
GUI socket the stop decision is reduced across the ranks with
`trainer.strategy.reduce_boolean_decision(trainer.should_stop, all=False)` instead of a bare
barrier, so every rank leaves the fit loop at the same batch.

Thread: https://github.com/talmolab/sleap-nn/pull/471
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
                trainer.should_stop = True

        # Propagate the stop decision: every rank stops if any rank was told to.
        trainer.should_stop = trainer.strategy.reduce_boolean_decision(trainer.should_stop, all=False)


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
