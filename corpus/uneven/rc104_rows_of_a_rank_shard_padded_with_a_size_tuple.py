"""The same padding helper on the rows of this rank's shard of the files (`files[rank::world]`):
with a file count that does not divide by the world size, the row count, written first in the
size tuple, differs between ranks, and so does anything made one per row (here a weight each)."""
import torch
import torch.distributed as dist


def pad(rows, padding_value=0):
    longest = [max(len(row) for row in rows)]
    out = torch.full((len(rows), *longest), padding_value, dtype=torch.long)
    for i, row in enumerate(rows):
        out[i, : len(row)] = row
    return out


def encode_shard(tokenizer, files):
    rank, world = dist.get_rank(), dist.get_world_size()
    rows = [torch.tensor(tokenizer(open(path).read())) for path in files[rank::world]]
    input_ids = pad(rows)
    weights = torch.ones(input_ids.size(0))
    everyone = [torch.zeros_like(weights) for _ in range(world)]
    dist.all_gather(everyone, weights)  # expect: RC104
    return input_ids, everyone
