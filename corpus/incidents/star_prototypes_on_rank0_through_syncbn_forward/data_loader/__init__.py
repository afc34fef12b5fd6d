from .voc import VOCIncremental

__all__ = ["VOCIncremental"]
