"""Trimmed copy of `accelerate.data_loader` with the fix of huggingface/accelerate#1709: only the
dispatching data loader and the `prepare_data_loader` path that builds it."""
from .data_loader import DataLoaderDispatcher, prepare_data_loader

__all__ = ["DataLoaderDispatcher", "prepare_data_loader"]
