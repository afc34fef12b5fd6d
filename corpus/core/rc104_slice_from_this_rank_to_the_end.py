"""Look-alikes of equal-width slices whose length does depend on the rank: a cut from this rank's
start to the end of the list, a slice object whose stop is not start plus a width, a width that is
itself the rank, and shares rounded up (`(n + ws - 1) // ws`, `math.ceil`) so that the last ranks'
run past the end. Each rank then gathers a different number of items."""
import math

import torch
import torch.distributed as dist


def completion_lengths(all_completion_ids, per_rank):
    rank = dist.get_rank()
    completion_ids = all_completion_ids[rank * per_rank:]
    lengths = torch.tensor([len(ids) for ids in completion_ids])
    gathered = [torch.empty_like(lengths) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, lengths)  # expect: RC104
    return gathered


def shard_of(buffer, shard_size):
    rank = dist.get_rank()
    cut = slice(rank, rank * shard_size)
    shard = buffer[cut]
    dist.all_reduce(shard)  # expect: RC104
    return shard


def growing(buffer):
    start = dist.get_rank()
    shard = buffer[start:start + start + 1]
    dist.all_reduce(shard)  # expect: RC104
    return shard


def rounded_up_shares(samples):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    per_rank = (len(samples) + world_size - 1) // world_size
    mine = torch.tensor(samples[rank * per_rank:(rank + 1) * per_rank])
    dist.all_reduce(mine)  # expect: RC104
    return mine


def ceil_shares(samples):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    per_rank = math.ceil(len(samples) / world_size)
    start = rank * per_rank
    mine = torch.tensor(samples[start:start + per_rank])
    dist.all_reduce(mine)  # expect: RC104
    return mine


def pairs_with_a_factor_forgotten(all_rewards, prompts):
    # the start lacks the `* 2` of the stop: the slice holds (rank + 2) * len(prompts) items
    rank = dist.get_rank()
    rewards = all_rewards[rank * len(prompts):(rank + 1) * len(prompts) * 2]
    dist.all_reduce(rewards)  # expect: RC104
    return rewards



def slice_to_the_rank(x, dim):
    # one slice object per dimension, the cut one ending at the rank: as long as the rank says
    rank = dist.get_rank()
    slc = [slice(None)] * len(x.shape)
    slc[dim] = slice(0, rank + 1)
    return x[tuple(slc)].contiguous()


def columns_from_the_rank(table):
    rank = dist.get_rank()
    return table[:, slice(rank, None)]


def reduce_slice_to_the_rank(hidden):
    shard = slice_to_the_rank(hidden, dim=1)
    dist.all_reduce(shard)  # expect: RC104
    return shard


def reduce_columns_from_the_rank(table):
    part = columns_from_the_rank(table)
    dist.all_reduce(part)  # expect: RC104
    return part
