"""Trimmed data helpers of DeepSpeed-Chat step 2: pairwise (chosen, rejected) samples read from a
JSON-lines file and split into train/eval, tokenized to a fixed length."""
import json

import torch
from torch.utils.data import Dataset


class PairwiseDataset(Dataset):
    def __init__(self, rows, tokenizer, max_seq_len):
        self.items = []
        for row in rows:
            chosen = tokenizer(row["prompt"] + row["chosen"], max_length=max_seq_len,
                               padding="max_length", truncation=True, return_tensors="pt")
            rejected = tokenizer(row["prompt"] + row["rejected"], max_length=max_seq_len,
                                 padding="max_length", truncation=True, return_tensors="pt")
            self.items.append((chosen["input_ids"], chosen["attention_mask"],
                               rejected["input_ids"], rejected["attention_mask"]))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        return self.items[idx]


def create_prompt_dataset(data_path, eval_ratio, seed, tokenizer, max_seq_len):
    with open(data_path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    g = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(rows), generator=g).tolist()
    n_eval = max(1, int(len(rows) * eval_ratio))
    eval_rows = [rows[i] for i in order[:n_eval]]
    train_rows = [rows[i] for i in order[n_eval:]]
    return (PairwiseDataset(train_rows, tokenizer, max_seq_len),
            PairwiseDataset(eval_rows, tokenizer, max_seq_len))


class DataCollatorReward:
    def __call__(self, data):
        batch = {}
        batch["input_ids"] = torch.cat([f[0] for f in data] + [f[2] for f in data], dim=0)
        batch["attention_mask"] = torch.cat([f[1] for f in data] + [f[3] for f in data], dim=0)
        return batch
