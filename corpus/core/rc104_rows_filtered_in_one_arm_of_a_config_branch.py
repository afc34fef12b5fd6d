"""The look-alike where one arm filters this rank's batch (`if sample`): how many rows are kept
is this rank's own, so a buffer sized by them differs per rank whichever arm the configuration
picks."""
import torch
import torch.distributed as dist


def count_kept_rows(batch, use_fixed):
    if use_fixed:
        rows = [0 for _ in range(8)]
    else:
        rows = [len(sample) for sample in batch if sample]
    counts = torch.zeros(len(rows))
    dist.all_reduce(counts)  # expect: RC104
