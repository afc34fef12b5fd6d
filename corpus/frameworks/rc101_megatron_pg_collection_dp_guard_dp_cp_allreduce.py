"""Megatron-core with a ProcessGroupCollection: the token count is all-reduced over the
data-parallel x context-parallel group, but only on the first data-parallel rank. The other
members of that group (the other data-parallel ranks) never reach the all_reduce, and the first
one waits in it.
"""
import torch
import torch.distributed as dist


def global_token_count(num_tokens: torch.Tensor, pg_collection) -> torch.Tensor:
    total = num_tokens.to(torch.float32).sum()
    if pg_collection.dp.rank() == 0:
        dist.all_reduce(total, group=pg_collection.dp_cp)  # expect: RC101
    return total
