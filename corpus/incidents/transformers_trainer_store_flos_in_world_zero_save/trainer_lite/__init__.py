"""Pieces of a transformers-3.x style `Trainer` (training loop, logging, checkpointing) and its
distributed helpers."""
