"""The look-alike: the input is sized by the rank but the receive list has equal slots, so the
ranks pass tensors of different sizes into slots that do not fit them."""
import torch
import torch.distributed as dist


def gather_uneven(group, world_size: int):
    rank = group.rank()
    slots = [torch.empty(4) for _ in range(world_size)]
    mine = torch.ones(rank + 1)
    dist.all_gather(slots, mine, group=group)  # expect: RC104
    return slots
