"""Each rank tells the others who it is: a one-element tensor filled with its rank, all-gathered
into a table. The fill value is the rank; the size, `(1,)`, is the same everywhere."""
import torch
import torch.distributed as dist


def gather_ranks() -> torch.Tensor:
    rank = dist.get_rank()
    mine = torch.full((1,), rank, dtype=torch.long)
    table = torch.empty(dist.get_world_size(), dtype=torch.long)
    dist.all_gather_into_tensor(table, mine)
    return table
