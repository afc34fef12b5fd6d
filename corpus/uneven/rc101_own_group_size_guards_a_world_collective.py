"""The look-alike's coordinator, where what the pick made alike on a group guards a collective on
another group: groups of different sizes (a last pipeline stage of one rank) make `world_size > 1`
true on some ranks of the world only, and a world barrier or a broadcast from the group's own
first member is then issued by part of the world, or with a root of each group's own."""
from typing import List

import torch
import torch.distributed as dist


class GroupCoordinator:
    def __init__(self, group_ranks: List[List[int]]):
        self.rank = dist.get_rank()
        for ranks in group_ranks:
            group = dist.new_group(ranks, backend="gloo")
            if self.rank in ranks:
                self.ranks = ranks
                self.world_size = len(ranks)
                self.group = group
        if self.world_size > 1:
            dist.barrier()  # expect: RC101
        self.seed = torch.zeros(1)
        dist.broadcast(self.seed, src=self.ranks[0])  # expect: RC104
