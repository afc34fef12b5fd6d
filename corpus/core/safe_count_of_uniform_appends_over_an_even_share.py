"""The look-alike of rc104_count_of_uniform_appends_over_this_ranks_shard.py whose loop runs
alike everywhere: the files are first cut to a multiple of the number of ranks and each rank
takes an equal contiguous block, so every rank appends as many statuses and the all-reduced
tensors have one length."""
import torch
import torch.distributed as dist


def check_files(files, load):
    rank, world = dist.get_rank(), dist.get_world_size()
    per_rank = len(files) // world
    status = []
    for path in files[rank * per_rank:(rank + 1) * per_rank]:
        load(path)
        status.append(1.0)
    ok = torch.tensor(status)
    dist.all_reduce(ok)
    return ok
