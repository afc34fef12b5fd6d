"""ckpt: checkpoint naming and writing (pure file I/O, no collectives)."""
from .writer import save_checkpoint

__all__ = ["save_checkpoint"]
