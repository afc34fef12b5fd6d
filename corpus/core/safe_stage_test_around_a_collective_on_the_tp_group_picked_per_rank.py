"""A parallel context that creates every group of each mesh dimension and keeps the one holding
this rank (nanotron's ParallelContext): the last pipeline stage samples with an all-reduce on its
tensor-parallel group, whose members all sit in that stage, so they all take the arm together."""
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


def sample_on_last_stage(parallel_context: ParallelContext, logits, last_stage: int):
    is_last_stage = dist.get_rank(parallel_context.pp_pg) == last_stage
    if is_last_stage:
        dist.all_reduce(logits, group=parallel_context.tp_pg)
    return logits


def main(logits):
    dist.init_process_group("nccl", timeout=timedelta(minutes=10))
    sample_on_last_stage(ParallelContext(2, 2), logits, 1)
