"""A helper picks the tensor to share by the rank (`t if rank == 0 else None`, an owner table or a
list of shards looked up by the rank): `is not None` of it is true on some ranks only, and the
collective under it is issued by those alone."""
import torch
import torch.distributed as dist


def pick_for_owner(rank, scores):
    return scores if rank == 0 else None


def share_scores(scores):
    rank = dist.get_rank()
    mine = pick_for_owner(rank, scores)
    if mine is not None:
        gathered = [torch.zeros_like(mine) for _ in range(dist.get_world_size())]
        dist.all_gather(gathered, mine)  # expect: RC101


def share_owned(shards):
    rank = dist.get_rank()
    owned = shards.get(rank)
    if owned is not None:
        dist.all_reduce(owned)  # expect: RC101


def count_owned(shards, owned):
    rank = dist.get_rank()
    mine = shards[rank]
    if mine is not None:
        dist.all_reduce(owned)  # expect: RC101
