"""The look-alike: a caller passes its own rank as the source, so every rank names itself as the
root of the broadcast."""
import torch
import torch.distributed as dist


def broadcast_list(size, values=None, rank=0):
    if dist.get_rank() == rank:
        tensor = torch.tensor(values, dtype=torch.int64)
    else:
        tensor = torch.empty(size, dtype=torch.int64)
    dist.broadcast(tensor, rank)  # expect: RC104
    return tensor


def share_prompt_sizes(sizes):
    return broadcast_list(2, values=sizes, rank=dist.get_rank()).tolist()
