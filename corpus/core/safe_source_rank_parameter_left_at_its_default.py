"""`rank` here is the source of the broadcast, and every caller leaves it at its default 0: alike
on every rank, so `src=rank` is fine (Megatron-LM's inference communication_utils.broadcast_list
has this shape)."""
import torch
import torch.distributed as dist


def broadcast_list(size, values=None, rank=0):
    if dist.get_rank() == rank:
        tensor = torch.tensor(values, dtype=torch.int64)
    else:
        tensor = torch.empty(size, dtype=torch.int64)
    dist.broadcast(tensor, rank)
    return tensor


def share_prompt_sizes(sizes):
    return broadcast_list(2, values=sizes).tolist()
