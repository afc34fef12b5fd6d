"""A Hugging Face dataset cut down to a multiple of the world size (`n - n % world_size` rows)
before `shard(world_size, rank)`: every shard has as many rows, so every rank's loader has as
many batches and the DDP forward's collectives line up.
"""
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader


def train(model, dataset, batch_size):
    rank = dist.get_rank()
    dataset = dataset.select(range(len(dataset) - len(dataset) % dist.get_world_size()))
    dataset = dataset.shard(dist.get_world_size(), rank)
    ddp_model = DDP(model, device_ids=[rank])
    for batch in DataLoader(dataset, batch_size=batch_size):
        ddp_model(batch["input_ids"]).sum().backward()
