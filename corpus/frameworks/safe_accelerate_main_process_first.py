"""The accelerate idiom for "cache once, then everyone reads": main_process_first() lets the main
process go first and releases the others afterwards, with balanced barriers inside."""
import os

import torch
from accelerate import PartialState


def tokenize_and_cache(texts, cache_path: str) -> None:
    state = PartialState()
    with state.local_main_process_first():
        if not os.path.exists(cache_path):
            ids = [torch.tensor([ord(c) for c in text]) for text in texts]
            torch.save(ids, cache_path)


def load_dataset(texts, cache_path: str):
    tokenize_and_cache(texts, cache_path)
    return torch.load(cache_path)
