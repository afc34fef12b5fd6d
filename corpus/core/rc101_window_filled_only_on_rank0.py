"""The look-alike: only rank 0 appends its batches to the window, so only rank 0's window ever
fills and only rank 0 enters the all_reduce."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def windows(dataset, accumulation: int):
    loader = DataLoader(dataset, batch_size=4, sampler=DistributedSampler(dataset))
    window = []
    for batch in loader:
        if dist.get_rank() == 0:
            window.append(batch)
        if len(window) == accumulation:
            tokens = torch.tensor([float(len(window))])
            dist.all_reduce(tokens)  # expect: RC101
            yield window, tokens
            window = []
