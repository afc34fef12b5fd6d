"""Trimmed copy of `composer.trainer.checkpoint` (composer 0.3.x, January 2022, with
mosaicml/composer#334): only the loader that fetches a checkpoint archive per node and restores it."""
from .checkpoint import CheckpointLoader

__all__ = ["CheckpointLoader"]
