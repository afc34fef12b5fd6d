"""ColossalChat's trainers on a process-group mesh in the shape of ColossalAI's ProcessGroupMesh
(a rank's coordinates come from its global rank, every rank creates every group, and the group
along an axis is the one of that dimension the rank is in). On the pipeline path only the last
stage holds the loss, and it averages it over its data-parallel group. Every member of that group is on the same stage (the group lies
along the data-parallel axis of the mesh), so the whole group reduces together. The helper's
other arm reduces over every rank; the look-alike calls it without the plugin, so the last stage
waits for the other stages in a world all-reduce they never enter.

The trainer is the library's: nothing here builds it, so the booster it is given is of no known
type, and `stage_manager.is_last_stage()` is the pipeline's last-stage test by its name."""
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


def all_reduce_mean(tensor, plugin=None):
    if plugin is not None:
        dist.all_reduce(tensor, group=plugin.dp_group)
        tensor.div_(plugin.dp_size)
    else:
        dist.all_reduce(tensor)
        tensor.div_(dist.get_world_size())
    return tensor


class SFTTrainer:
    def __init__(self, booster, plugin=None):
        self.booster = booster
        self.plugin = plugin

    def train_step(self, loss):
        if isinstance(self.plugin, HybridParallelPlugin) and self.plugin.pp_size > 1:
            if self.booster.plugin.stage_manager.is_last_stage():
                return all_reduce_mean(loss, self.plugin)
        return loss

    def train_step_world(self, loss):
        if isinstance(self.plugin, HybridParallelPlugin) and self.plugin.pp_size > 1:
            if self.booster.plugin.stage_manager.is_last_stage():
                return all_reduce_mean(loss)  # expect: RC101
        return loss
