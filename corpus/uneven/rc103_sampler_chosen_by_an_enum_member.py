"""dinov2-style loader factory: the sampler is chosen by an enum member the caller passes
(`make_data_loader(..., sampler_type=SamplerType.EPOCH)`); the epoch sampler strides the indices
by rank without padding, so a loop over that loader runs a per-rank number of rounds. The call
passes the member, and the factory's other samplers (a padding DistributedSampler) are not what
this loader has."""
from enum import Enum

import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


class SamplerType(Enum):
    DISTRIBUTED = 0
    EPOCH = 1


class EpochSampler:
    def __init__(self, size):
        self.size = size

    def __iter__(self):
        for i in range(dist.get_rank(), self.size, dist.get_world_size()):
            yield i


def make_sampler(dataset, type=None):
    if type == SamplerType.EPOCH:
        return EpochSampler(len(dataset))
    elif type == SamplerType.DISTRIBUTED:
        return DistributedSampler(dataset)
    return None


def make_loader(dataset, sampler_type):
    return DataLoader(dataset, sampler=make_sampler(dataset, type=sampler_type))


def train(model, dataset):
    loader = make_loader(dataset, SamplerType.EPOCH)
    for batch in loader:  # expect: RC103
        out = model(batch)
        dist.all_reduce(out)
