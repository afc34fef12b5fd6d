"""Each rank's share of a list every rank holds, cut with the width written into the bounds: trl's
vLLM server mode broadcasts all completions and each process keeps
`slice(process_index * len(prompts), (process_index + 1) * len(prompts))`, then gathers the
completion lengths; Megatron-style code keeps `buffer[start:start + shard_size]`; a share rounded
down (`len(samples) // world_size`) drops the remainder. The bounds depend on the rank, the number
of items does not: every rank gathers as many."""
import torch
import torch.distributed as dist


def completion_lengths(all_completion_ids, per_rank):
    rank = dist.get_rank()
    process_slice = slice(rank * per_rank, (rank + 1) * per_rank)
    completion_ids = all_completion_ids[process_slice]
    lengths = torch.tensor([len(ids) for ids in completion_ids])
    gathered = [torch.empty_like(lengths) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, lengths)
    return gathered


def shard_of(buffer, shard_size):
    start = dist.get_rank() * shard_size
    shard = buffer[start:start + shard_size]
    dist.all_reduce(shard)
    return shard


def rows_of(table, rows):
    rank = dist.get_rank()
    mine = table[:, rows * rank:rows * (rank + 1)]
    dist.all_reduce(mine)
    return mine


def rounded_down_shares(samples):
    rank, world_size = dist.get_rank(), dist.get_world_size()
    per_rank = len(samples) // world_size
    mine = torch.tensor(samples[rank * per_rank:(rank + 1) * per_rank])
    dist.all_reduce(mine)
    return mine


def pairs_per_prompt(all_rewards, prompts):
    # trl's online DPO keeps two completions per prompt: the width is len(prompts) * 2
    rank = dist.get_rank()
    rewards = all_rewards[rank * len(prompts) * 2:(rank + 1) * len(prompts) * 2]
    dist.all_reduce(rewards)
    return rewards



def slice_input_tensor(x, dim):
    # verl's Ulysses helper: one slice object per dimension, this rank's equal part of one of
    # them, and the tensor cut with the tuple of them
    sp_rank, sp_size = dist.get_rank(), dist.get_world_size()
    parts = x.size(dim) // sp_size
    slc = [slice(None)] * len(x.shape)
    slc[dim] = slice(sp_rank * parts, (sp_rank + 1) * parts)
    return x[tuple(slc)].contiguous()


def columns_of(table, cols):
    rank = dist.get_rank()
    mine = slice(rank * cols, (rank + 1) * cols)
    return table[:, mine]


def reduce_sequence_shard(hidden):
    shard = slice_input_tensor(hidden, dim=1)
    dist.all_reduce(shard)
    return shard


def reduce_columns(table):
    part = columns_of(table, 4)
    dist.all_reduce(part)
    return part
