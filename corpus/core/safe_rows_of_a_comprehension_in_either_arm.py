"""A comprehension is as long as what it iterates, on every rank: built over a fixed range in one
arm of a configuration test and over this rank's batch in the other, the list has as many items
as the batch or as the range, never a per-rank count (the batch is as long on every rank). (Before,
the comprehension over constants was taken for a value of unknown length, so after the branch
`len(rows)` read as this rank's data; trl's prompt ids, rebuilt by a comprehension in one arm of
a tokenizer workaround, were the real-code shape.)"""
import torch
import torch.distributed as dist


def count_rows(batch, use_fixed):
    if use_fixed:
        rows = [0 for _ in range(8)]
    else:
        rows = [len(sample) for sample in batch]
    counts = torch.zeros(len(rows))
    dist.all_reduce(counts)
