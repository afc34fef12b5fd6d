"""A parallel context that creates every group of each mesh dimension and keeps the one holding
this rank (nanotron's ParallelContext): a test of the tensor-parallel rank around a collective on
the tensor-parallel group itself is taken by one member of the group only."""
import os
from datetime import timedelta

import numpy as np
import torch.distributed as dist


class ParallelContext:
    def __init__(self, tensor_parallel_size: int, pipeline_parallel_size: int):
        world_size = dist.get_world_size()
        ranks = np.arange(world_size).reshape((pipeline_parallel_size, -1, tensor_parallel_size))
        self.world_ranks_to_pg = {}
        self.tp_pg = self.create_new_group(ranks.reshape((-1, tensor_parallel_size)))
        self.pp_pg = self.create_new_group(ranks.transpose((1, 2, 0)).reshape((-1, pipeline_parallel_size)))

    def create_new_group(self, all_groups_ranks):
        rank = int(os.environ["RANK"])
        group_containing_rank = None
        for group_ranks in all_groups_ranks:
            sorted_ranks = tuple(sorted(group_ranks))
            if sorted_ranks not in self.world_ranks_to_pg:
                self.world_ranks_to_pg[sorted_ranks] = dist.new_group(ranks=list(sorted_ranks), timeout=timedelta(minutes=10))
            if rank in sorted_ranks:
                group_containing_rank = self.world_ranks_to_pg[sorted_ranks]
        return group_containing_rank


def sync_scale(parallel_context: ParallelContext, scale):
    if dist.get_rank(parallel_context.tp_pg) == 0:
        dist.all_reduce(scale, group=parallel_context.tp_pg)  # expect: RC101
    return scale


def main(scale):
    dist.init_process_group("nccl", timeout=timedelta(minutes=10))
    sync_scale(ParallelContext(2, 2), scale)
