"""The look-alike: the collate function pads each sample's sequence to a fixed length and keeps
every sample (the dataset substitutes another sample for a missing one), so every rank's batch
has the loader's batch size and the same shape."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


MAX_LEN = 128


def collate_fixed_length(batch):
    padded = [torch.nn.functional.pad(sample, (0, MAX_LEN - sample.size(0))) for sample in batch]
    return torch.stack(padded)


def gather_features(feat):
    gathered = [torch.zeros_like(feat) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, feat)
    return torch.cat(gathered, dim=0)


def train(dataset, model, batch_size):
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=batch_size, sampler=sampler, collate_fn=collate_fixed_length, drop_last=True)
    for tokens in loader:
        feats = gather_features(tokens)
        model(feats).sum().backward()
