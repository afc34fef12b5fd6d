"""The fix of the padded speech features: all-gather each rank's frame count first, pad the local
features to the longest (`F.pad(z, (0, 0, 0, longest - z.shape[1]))`), all-gather the tensors of
one shape, then cut each back to its own length."""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def collate(samples):
    return pad_sequence([s["fbank"] for s in samples], batch_first=True)


def gather_padded(z):
    world_size = dist.get_world_size()
    length = torch.tensor([z.shape[1]])
    lengths = [torch.zeros_like(length) for _ in range(world_size)]
    dist.all_gather(lengths, length)
    longest = int(max(t.item() for t in lengths))
    padded = F.pad(z, (0, 0, 0, longest - z.shape[1]))
    gathered = [torch.zeros_like(padded) for _ in range(world_size)]
    dist.all_gather(gathered, padded)
    return [g[:, : int(n.item())] for g, n in zip(gathered, lengths)]


def train(encoder, dataset, optimizer):
    loader = DataLoader(dataset, batch_size=16, sampler=DistributedSampler(dataset), collate_fn=collate)
    for feats in loader:
        z = encoder(feats)
        loss = torch.cat([g.mean(dim=1) for g in gather_padded(z)]).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
