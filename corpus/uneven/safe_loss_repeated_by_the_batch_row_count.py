"""Evaluation that gathers one loss per sample: the scalar loss is repeated as many times as the
batch has rows (`batch["input_ids"].shape[0]`). The batches are padded to each rank's longest
sample, so they differ in width, but not in how many rows they have: a DistributedSampler hands
every rank the same number of samples per batch."""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader
from transformers import DataCollatorWithPadding


@torch.no_grad()
def evaluate(model, dataset, tokenizer, accelerator: Accelerator):
    loader = accelerator.prepare(DataLoader(dataset, batch_size=8, collate_fn=DataCollatorWithPadding(tokenizer)))
    losses = []
    for batch in loader:
        out = model(**batch)
        losses.append(accelerator.gather_for_metrics(out.loss.repeat(batch["input_ids"].shape[0])))
    return torch.cat(losses).mean().item()
