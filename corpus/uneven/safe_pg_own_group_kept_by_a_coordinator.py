"""A coordinator object (vLLM/sglang's GroupCoordinator) builds every group and keeps on `self` the
one its rank is in, with that group's ranks and size; a helper then works on the group it is
given: its own rank in it, its first member as the source, a broadcast and an all-reduce over
it. Every member of a group picked the same group, so all of that is alike on the group."""
from typing import List

import torch
import torch.distributed as dist


def first_member_value(pg, value: int) -> int:
    rank = dist.get_rank(group=pg)
    ranks = dist.get_process_group_ranks(pg)
    box = [value if rank == 0 else None]
    if rank == 0:
        dist.broadcast_object_list(box, src=ranks[0], group=pg)
    else:
        dist.broadcast_object_list(box, src=ranks[0], group=pg)
    total = torch.tensor([box[0]])
    dist.all_reduce(total, group=pg)
    return int(total.item())


class GroupCoordinator:
    def __init__(self, group_ranks: List[List[int]]):
        self.rank = dist.get_rank()
        for ranks in group_ranks:
            group = dist.new_group(ranks, backend="gloo")
            if self.rank in ranks:
                self.ranks = ranks
                self.world_size = len(ranks)
                self.rank_in_group = ranks.index(self.rank)
                self.group = group
        self.agreed = 0
        if self.world_size > 1:
            self.agreed = first_member_value(self.group, 7)

    def all_reduce(self, t: torch.Tensor) -> torch.Tensor:
        if self.world_size == 1:
            return t
        dist.all_reduce(t, group=self.group)
        return t
