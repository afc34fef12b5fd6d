"""Validation data as a map-style dataset; Lightning's DistributedSampler splits it between the
ranks and pads the last shard, so every rank runs the same number of validation steps."""
import json
import os

import torch
from torch.utils.data import DataLoader, Dataset


class JsonlDataset(Dataset):
    def __init__(self, files, tokenizer, max_len: int = 2048):
        self.records = []
        for path in files:
            with open(path) as f:
                self.records.extend(json.loads(line)["text"] for line in f)
        self.tokenizer = tokenizer
        self.max_len = max_len

    def __len__(self):
        return len(self.records)

    def __getitem__(self, idx):
        ids = self.tokenizer(self.records[idx], truncation=True, max_length=self.max_len)["input_ids"]
        return {"input_ids": torch.tensor(ids)}


def val_dataloader(val_dir, tokenizer, batch_size: int = 4, collate_fn=None):
    files = sorted(os.path.join(val_dir, f) for f in os.listdir(val_dir) if f.endswith(".jsonl"))
    return DataLoader(JsonlDataset(files, tokenizer), batch_size=batch_size, collate_fn=collate_fn)
