"""The same model trimming each batch to its own longest sequence before the gather (to save
compute): the trimmed length is this rank's, so the ranks all-gather tensors of different shapes
from inside the DDP-wrapped module's forward (pytorch/pytorch#56112's MoCo)."""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def concat_all_gather(tensor):
    gathered = [torch.ones_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, tensor)  # expect: RC104
    return torch.cat(gathered, dim=0)


class Contrastive(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.encoder = nn.Linear(dim, dim)

    def forward(self, ids, lengths):
        trimmed = ids[:, : int(lengths.max())]
        keys = concat_all_gather(trimmed)
        return self.encoder(keys.float()).mean()


def train(build_loader, epochs: int, local_rank: int):
    loader, sampler = build_loader()
    model = DDP(Contrastive(64), device_ids=[local_rank])
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for ids, lengths in loader:
            loss = model(ids, lengths)
            loss.backward()
