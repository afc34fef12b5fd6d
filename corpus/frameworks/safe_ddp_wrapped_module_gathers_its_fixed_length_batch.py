"""A contrastive model wrapped in DDP that all-gathers the keys of its batch inside `forward`:
calling the wrapper runs the module's forward, collectives and all. The loader (built by a helper
rankcheck cannot read) pads every sample to one length and every rank takes the same batch size,
so what each rank gathers has one shape; its own slice of the gathered keys has the batch size."""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def concat_all_gather(tensor):
    gathered = [torch.ones_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, tensor)
    return torch.cat(gathered, dim=0)


class Contrastive(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.encoder = nn.Linear(dim, dim)

    def forward(self, ids):
        keys = concat_all_gather(ids)
        bsz = ids.size(0)
        mine = keys[dist.get_rank() * bsz : (dist.get_rank() + 1) * bsz]
        return self.encoder(mine.float()).mean()


def train(build_loader, epochs: int, local_rank: int):
    loader, sampler = build_loader()
    model = DDP(Contrastive(64), device_ids=[local_rank])
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for ids in loader:
            loss = model(ids)
            loss.backward()
