"""Checkpointers of an allennlp-style trainer: the default one pickles the trainer state from one
process; the DeepSpeed one delegates to `DeepSpeedEngine.save_checkpoint`."""
import os

import torch


class Checkpointer:
    def __init__(self, serialization_dir: str, keep_most_recent: int = 2) -> None:
        self._serialization_dir = serialization_dir
        self._keep_most_recent = keep_most_recent

    def save_checkpoint(self, epoch: int, trainer) -> None:
        model_state, training_state = trainer.get_checkpoint_state()
        torch.save(model_state, os.path.join(self._serialization_dir, f"model_state_epoch_{epoch}.th"))
        torch.save(training_state, os.path.join(self._serialization_dir, f"training_state_epoch_{epoch}.th"))


class DeepspeedCheckpointer(Checkpointer):
    def save_checkpoint(self, epoch: int, trainer) -> None:
        _, training_state = trainer.get_checkpoint_state()
        trainer.model_engine.save_checkpoint(self._serialization_dir, epoch, client_state=training_state)
