"""Megatron-core with a ProcessGroupCollection (`pg_collection.tp`, `.dp_cp`): only the first
tensor-parallel rank of each model replica counts the tokens of its batch, and those ranks
all-reduce the count over the data-parallel x context-parallel group. Every member of that group
holds the same tensor-parallel rank, so all of them take the branch together: no RC101.
Look-alike of rc101_megatron_pg_collection_dp_guard_dp_cp_allreduce.
"""
import torch
import torch.distributed as dist


def global_token_count(num_tokens: torch.Tensor, pg_collection) -> torch.Tensor:
    tp = getattr(pg_collection, "tp", None)
    total = num_tokens.to(torch.float32).sum()
    if dist.get_rank(group=tp) == 0:
        dist.all_reduce(total, group=pg_collection.dp_cp)
    return total
