"""The look-alike: the trainer calls the helper without its plugin, so the mean is taken over the
world group, whose ranks on the other pipeline stages never enter the all-reduce."""
import torch
import torch.distributed as dist
from colossalai.booster import Booster
from colossalai.booster.plugin import HybridParallelPlugin


def all_reduce_mean(tensor, plugin=None):
    if plugin is not None:
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM, group=plugin.dp_group)
        tensor.div_(plugin.dp_size)
    else:
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
        tensor.div_(dist.get_world_size())
    return tensor


class PipelineTrainer:
    def __init__(self, model, optimizer, criterion, plugin_config):
        self.plugin = HybridParallelPlugin(**plugin_config)
        self.booster = Booster(plugin=self.plugin)
        self.criterion = criterion
        self.model, self.optimizer, *_ = self.booster.boost(model, optimizer)

    def train_step(self, batch):
        outputs = self.booster.execute_pipeline(
            iter([batch]), self.model, criterion=self.criterion, optimizer=self.optimizer, return_loss=True
        )
        self.optimizer.step()
        self.optimizer.zero_grad()
        if self.booster.plugin.stage_manager.is_last_stage():
            loss = all_reduce_mean(outputs["loss"].detach())  # expect: RC101
            print(f"loss {loss.item():.4f}")
