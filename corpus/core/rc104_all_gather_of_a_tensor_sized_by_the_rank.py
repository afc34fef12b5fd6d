"""The look-alike of safe_all_gather_of_a_tensor_filled_with_the_rank.py: the tensor is filled
with the rank but also sized by it (one slot per lower rank), so the ranks pass different sizes."""
import torch
import torch.distributed as dist


def gather_ranks() -> torch.Tensor:
    rank = dist.get_rank()
    mine = torch.full((rank + 1,), rank, dtype=torch.long)
    table = torch.empty(dist.get_world_size(), dtype=torch.long)
    dist.all_gather_into_tensor(table, mine)  # expect: RC104
    return table
