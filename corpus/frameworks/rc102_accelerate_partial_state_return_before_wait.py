"""A dataset-caching helper returns early on every process but the local main one, yet the local
main process then waits in PartialState.wait_for_everyone for processes that already left."""
import os

import torch
from accelerate import PartialState


def tokenize_and_cache(texts, cache_path: str) -> None:
    state = PartialState()
    if not state.is_local_main_process:
        return  # expect: RC102
    if not os.path.exists(cache_path):
        ids = [torch.tensor([ord(c) for c in text]) for text in texts]
        torch.save(ids, cache_path)
    state.wait_for_everyone()


def load_dataset(texts, cache_path: str):
    tokenize_and_cache(texts, cache_path)
    return torch.load(cache_path)
