"""Validation data of an LLM fine-tuning project: the validation shards are split between the
trainers by hand, so each rank iterates over its own files."""
import json
import os

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, IterableDataset


class ShardedJsonlDataset(IterableDataset):
    def __init__(self, files, tokenizer, max_len: int = 2048):
        self.files = files
        self.tokenizer = tokenizer
        self.max_len = max_len

    def __iter__(self):
        rank = dist.get_rank() if dist.is_initialized() else 0
        world = dist.get_world_size() if dist.is_initialized() else 1
        for path in self.files[rank::world]:
            with open(path) as f:
                for line in f:
                    ids = self.tokenizer(json.loads(line)["text"], truncation=True, max_length=self.max_len)["input_ids"]
                    yield {"input_ids": torch.tensor(ids)}


def val_dataloader(val_dir, tokenizer, batch_size: int = 4, collate_fn=None):
    files = sorted(os.path.join(val_dir, f) for f in os.listdir(val_dir) if f.endswith(".jsonl"))
    return DataLoader(ShardedJsonlDataset(files, tokenizer), batch_size=batch_size, collate_fn=collate_fn)
