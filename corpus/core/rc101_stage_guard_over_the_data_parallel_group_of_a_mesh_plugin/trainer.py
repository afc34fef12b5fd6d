"""ColossalChat's trainers: on the pipeline path only the last stage holds the loss, and it averages
it over its data-parallel group. Every member of that group is on the same stage (the group lies
along the data-parallel axis of the mesh), so the whole group reduces together. The helper's
other arm reduces over every rank; the look-alike calls it without the plugin, so the last stage
waits for the other stages in a world all-reduce they never enter.

The trainer is the library's: nothing here builds it, so the booster it is given is of no known
type, and `stage_manager.is_last_stage()` is the pipeline's last-stage test by its name."""
import torch.distributed as dist

from hpc.mesh import HybridParallelPlugin


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
