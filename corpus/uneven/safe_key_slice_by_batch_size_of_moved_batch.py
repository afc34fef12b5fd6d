"""Each rank takes its own rows of a shared key table by its batch size: the loader (a
DistributedSampler, drop_last) gives every rank batches of one size, and moving the batch to the
GPU field by field keeps that size, so the slice it all-reduces has one shape everywhere (the
MoCo-style contrastive step)."""
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def gather_keys(keys):
    gathered = [torch.zeros_like(keys) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, keys)
    return torch.cat(gathered, dim=0)


def train(dataset, encoder, optimizer, batch_size, queue_size):
    rank = dist.get_rank()
    loader = DataLoader(dataset, batch_size=batch_size, sampler=DistributedSampler(dataset), drop_last=True)
    queue = torch.zeros(queue_size, 128)
    for batch in loader:
        batch = {k: v.cuda(non_blocking=True) for k, v in batch.items()}
        images, labels = batch["images"], batch["labels"]
        bsz = images.shape[0]
        keys = torch.zeros(queue_size, 128)
        own = keys[rank * bsz:(rank + 1) * bsz]
        dist.all_reduce(own)
        queue = torch.cat([queue[bsz:], own])
        loss = encoder(images, labels, queue)
        loss.backward()
        optimizer.step()
