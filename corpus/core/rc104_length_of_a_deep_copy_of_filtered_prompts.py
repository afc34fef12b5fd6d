"""A deep copy keeps how many items it copies, so the copy of the prompts this rank's filter
kept is as long as what the filter kept: a buffer sized by it has a per-rank length."""
import copy

import torch
import torch.distributed as dist


def kept_lengths(batch):
    prompts = [sample["prompt"] for sample in batch if sample["keep"]]
    prompts = copy.deepcopy(prompts)
    lengths = torch.zeros(len(prompts))
    dist.all_reduce(lengths)  # expect: RC104
    return lengths
