"""How many ranks a process group holds is the same on all of them, whichever group of its
dimension a rank picked: ColossalAI's HybridParallelPlugin takes its data-parallel group from the
rank's mesh coordinates and builds every loader's sampler with `num_replicas=self.dp_group.size()`;
the loaders are as long on every rank, and a loop over `range(dist.get_world_size(group))` runs as
many rounds everywhere.

The look-alike takes this rank's strided share of a list by its rank in the group: the shares of
ten items over a group that does not divide them differ by one."""
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


class Plugin:
    def __init__(self, groups):
        self.dp_group = groups[dist.get_rank() // 2]

    def prepare_dataloader(self, dataset, batch_size):
        sampler = DistributedSampler(dataset, num_replicas=self.dp_group.size(), rank=dist.get_group_rank(self.dp_group, global_rank=dist.get_rank()))
        return DataLoader(dataset, batch_size=batch_size, sampler=sampler)


def train(dataset, model, groups):
    plugin = Plugin(groups)
    for batch in plugin.prepare_dataloader(dataset, 8):
        dist.all_reduce(model(batch), group=plugin.dp_group)
    for peer in range(dist.get_world_size(plugin.dp_group)):
        dist.barrier(group=plugin.dp_group)


def shares(groups):
    group = groups[dist.get_rank() % 2]
    mine = list(range(10))[dist.get_rank(group) :: group.size()]
    for item in mine:  # expect: RC103
        dist.barrier(group=group)
