"""The same sampler built on the pipeline group: only the last stage samples, and the all-to-all
on the pipeline group, which crosses the stages, waits for the stages that never enter it."""
from dataclasses import dataclass
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



@dataclass
class TopPSampler:
    pg: dist.ProcessGroup
    p: float = 0.9
    temperature: float = 1.0

    def __call__(self, sharded_logits):
        out = [sharded_logits.clone() for _ in range(self.pg.size())]
        dist.all_to_all(out, list(sharded_logits.chunk(self.pg.size())), group=self.pg)
        return out


def sample(parallel_context: ParallelContext, sharded_logits, last_stage: int):
    is_decoder_logit_rank = dist.get_rank(parallel_context.pp_pg) == last_stage
    if is_decoder_logit_rank:
        sampler = TopPSampler(pg=parallel_context.pp_pg)
        return sampler(sharded_logits)  # expect: RC101
    return None


def main(sharded_logits):
    dist.init_process_group("nccl", timeout=timedelta(minutes=10))
    sample(ParallelContext(2, 2), sharded_logits, 1)
