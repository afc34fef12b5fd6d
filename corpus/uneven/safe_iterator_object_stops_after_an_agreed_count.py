"""The look-alike: the same iterator-object sampler over this rank's partition, but `__next__`
stops after a batch count every rank agreed on (the minimum over ranks, all-reduced when the
sampler is built), so every rank's loader gives the same number of batches."""
import math

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader


def partition_ids(ids, world_size, rank):
    per_partition = int(math.ceil(len(ids) / float(world_size)))
    start = rank * per_partition
    return ids[start:min(start + per_partition, len(ids))]


class FixedCountBatchSampler:
    def __init__(self, num_items, batch_size, rank=None, world_size=None):
        self.rank = dist.get_rank() if rank is None else rank
        self.world_size = dist.get_world_size() if world_size is None else world_size
        self.ids = partition_ids(list(range(num_items)), self.world_size, self.rank)
        self.batch_size = batch_size
        local = torch.tensor([len(self.ids) // batch_size])
        dist.all_reduce(local, op=dist.ReduceOp.MIN)
        self.num_batches = int(local.item())
        self.produced = 0

    def __iter__(self):
        self.produced = 0
        return self

    def __next__(self):
        if self.produced >= self.num_batches:
            raise StopIteration()
        start = self.produced * self.batch_size
        self.produced += 1
        return self.ids[start:start + self.batch_size]


def train_epoch(ddp_model, dataset, num_items, optimizer):
    loader = DataLoader(dataset, batch_sampler=FixedCountBatchSampler(num_items, batch_size=8))
    for batch in loader:
        loss = ddp_model(batch).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def main(net, dataset, durations):
    dist.init_process_group("nccl")
    model = DDP(net)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _ in range(10):
        train_epoch(model, dataset, len(dataset), optimizer)
