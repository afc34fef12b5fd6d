"""A process-group mesh in the shape of ColossalAI's ProcessGroupMesh: a rank's coordinates come
from its global rank, every rank creates every group, and the group along an axis is the one of
that dimension the rank is in."""
import torch.distributed as dist


class ProcessGroupMesh:
    def __init__(self, dp_size, pp_size):
        self.shape = (dp_size, pp_size)
        rank = dist.get_rank()
        self._coord = (rank // pp_size, rank % pp_size)
        self._dp_groups = [dist.new_group([d * pp_size + p for d in range(dp_size)], timeout=60) for p in range(pp_size)]
        self._pp_groups = [dist.new_group([d * pp_size + p for p in range(pp_size)], timeout=60) for d in range(dp_size)]

    def coordinate(self, axis):
        return self._coord[axis]

    def get_group_along_axis(self, axis):
        if axis == 0:
            return self._dp_groups[self._coord[1]]
        return self._pp_groups[self._coord[0]]


class PipelineStageManager:
    def __init__(self, mesh, axis):
        self.stage = mesh.coordinate(axis)
        self.num_stages = mesh.shape[axis]

    def is_last_stage(self):
        return self.stage == self.num_stages - 1


class HybridParallelPlugin:
    def __init__(self, dp_size, pp_size):
        self.pp_size = pp_size
        self.pg_mesh = ProcessGroupMesh(dp_size, pp_size)
        self.dp_group = self.pg_mesh.get_group_along_axis(0)
        self.dp_size = dist.get_world_size(self.dp_group)
        self.stage_manager = PipelineStageManager(self.pg_mesh, 1)
