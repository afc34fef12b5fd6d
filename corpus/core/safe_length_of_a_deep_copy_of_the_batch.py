"""A deep copy is what it copies: trl copies the prompts of this rank's batch
(`prompts = copy.deepcopy(prompts)`) before tokenizing them, and a buffer sized by how many
there are is as long as the batch on every rank. (Reported before as per-rank data: the copy
was an unknown call's result, whose length was what its argument's values depend on.)"""
import copy

import torch
import torch.distributed as dist


def prompt_lengths(batch):
    prompts = [sample["prompt"] for sample in batch]
    prompts = copy.deepcopy(prompts)
    lengths = torch.zeros(len(prompts))
    dist.all_reduce(lengths)
    return lengths


def shallow_copy(batch):
    rows = copy.copy([sample["input_ids"] for sample in batch])
    counts = torch.zeros(len(rows))
    dist.all_reduce(counts)
