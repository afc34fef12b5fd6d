"""Trimmed copy of `lightning.pytorch.callbacks.ModelCheckpoint` (Lightning 2.1): the top-k path only."""
from .model_checkpoint import ModelCheckpoint

__all__ = ["ModelCheckpoint"]
