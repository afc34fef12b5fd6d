"""Trimmed copy of `transformers.Trainer` (v4.37, before huggingface/transformers#29099): the
training loop with its `include_num_input_tokens_seen` bookkeeping."""
from .trainer import Trainer

__all__ = ["Trainer"]
