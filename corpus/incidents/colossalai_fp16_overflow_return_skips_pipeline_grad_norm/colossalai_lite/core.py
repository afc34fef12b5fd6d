"""Trimmed ColossalAI global context: one process group per parallel mode, built at launch from the
config's `parallel` dict (pipeline size and data-parallel size; tensor parallelism left out)."""
import torch.distributed as dist

from colossalai_lite.context import ParallelMode


class ParallelContext:
    def __init__(self):
        self._groups = {}
        self._ranks_in_group = {}
        self._local_rank = {}
        self.config = None

    def is_initialized(self, mode: ParallelMode) -> bool:
        return mode in self._groups

    def get_group(self, mode: ParallelMode):
        return self._groups[mode]

    def get_world_size(self, mode: ParallelMode) -> int:
        return len(self._ranks_in_group[mode])

    def get_local_rank(self, mode: ParallelMode) -> int:
        return self._local_rank[mode]

    def is_first_rank(self, mode: ParallelMode) -> bool:
        return self.get_local_rank(mode) == 0

    def is_last_rank(self, mode: ParallelMode) -> bool:
        return self.get_local_rank(mode) == self.get_world_size(mode) - 1

    def get_prev_global_rank(self, mode: ParallelMode) -> int:
        ranks = self._ranks_in_group[mode]
        return ranks[(self.get_local_rank(mode) - 1) % len(ranks)]

    def get_next_global_rank(self, mode: ParallelMode) -> int:
        ranks = self._ranks_in_group[mode]
        return ranks[(self.get_local_rank(mode) + 1) % len(ranks)]

    def _register(self, mode, ranks, rank):
        group = dist.new_group(ranks)
        if rank in ranks:
            self._groups[mode] = group
            self._ranks_in_group[mode] = list(ranks)
            self._local_rank[mode] = ranks.index(rank)

    def init_parallel_groups(self, config):
        self.config = config
        world_size = dist.get_world_size()
        rank = dist.get_rank()
        pipeline_size = config.parallel.get("pipeline", 1)
        data_size = world_size // pipeline_size
        # global rank = data_rank * pipeline_size + pipeline_rank
        for d in range(data_size):
            pipe_ranks = [d * pipeline_size + p for p in range(pipeline_size)]
            self._register(ParallelMode.PIPELINE, pipe_ranks, rank)
            # no tensor parallelism here: the model-parallel group is the pipeline group
            self._register(ParallelMode.MODEL, pipe_ranks, rank)
        for p in range(pipeline_size):
            data_ranks = [d * pipeline_size + p for d in range(data_size)]
            self._register(ParallelMode.DATA, data_ranks, rank)
        self._register(ParallelMode.GLOBAL, list(range(world_size)), rank)


global_context = ParallelContext()
