"""A loader whose collate function drops the samples the dataset could not read (it returns None
for a missing file): how many samples a batch keeps is this rank's, so the features all-gathered
from it have a per-rank first dimension (JOTR#4)."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
from torch.utils.data.dataloader import default_collate


def collate_skip_missing(batch):
    batch = [sample for sample in batch if sample is not None]
    return default_collate(batch)


def gather_features(feat):
    gathered = [torch.zeros_like(feat) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, feat)  # expect: RC104
    return torch.cat(gathered, dim=0)


def train(dataset, model, batch_size):
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler, collate_fn=collate_skip_missing, drop_last=True)
    for images in loader:
        feats = gather_features(images)
        model(feats).sum().backward()
