"""A batch sampler written as an iterator object (lhotse's cut samplers of 2021): `__iter__`
returns the sampler itself, and `__next__` packs this rank's contiguous partition of the utterances
into batches by total duration, raising StopIteration once the partition is used up. The last
partition is shorter (a rounded-up partition size), so that rank's loader runs out first and stops
issuing DDP's gradient all-reduce while the others wait in it."""
import math

import torch

import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader


class Partition:
    def __init__(self, items):
        self._items = items

    def __getitem__(self, index):
        return self._items[index]

    def __len__(self):
        return len(self._items)


def partition_ids(ids, world_size, rank):
    per_partition = int(math.ceil(len(ids) / float(world_size)))
    start = rank * per_partition
    return ids[start:min(start + per_partition, len(ids))]


class DurationBatchSampler:
    def __init__(self, durations, max_duration, rank=None, world_size=None):
        self.rank = dist.get_rank() if rank is None else rank
        self.world_size = dist.get_world_size() if world_size is None else world_size
        self.durations = durations
        self.max_duration = max_duration
        self.source = Partition(partition_ids(list(range(len(durations))), self.world_size, self.rank))
        self.position = 0

    def __iter__(self):
        self.position = 0
        return self

    def __len__(self):
        return sum(1 for _ in self)

    def __next__(self):
        batch, total = [], 0.0
        while True:
            if self.position >= len(self.source):
                if batch:
                    return batch
                raise StopIteration()
            index = self.source[self.position]
            if batch and total + self.durations[index] > self.max_duration:
                return batch
            batch.append(index)
            total += self.durations[index]
            self.position += 1


def train_epoch(ddp_model, dataset, durations, optimizer):
    loader = DataLoader(dataset, batch_sampler=DurationBatchSampler(durations, max_duration=200.0))
    for batch in loader:  # expect: RC103
        loss = ddp_model(batch).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def main(net, dataset, durations):
    dist.init_process_group("nccl")
    model = DDP(net)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _ in range(10):
        train_epoch(model, dataset, durations, optimizer)
