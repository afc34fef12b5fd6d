"""Speech features padded by the collate function to the longest utterance of each batch
(`pad_sequence(..., batch_first=True)`): every rank's batch is as wide as its own longest
utterance, and the encoder's (B, T, D) output is all-gathered as is, with receive buffers shaped
like this rank's tensor, so the ranks' shapes disagree."""
import torch
import torch.distributed as dist
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def collate(samples):
    return pad_sequence([s["fbank"] for s in samples], batch_first=True)


def train(encoder, dataset, optimizer):
    loader = DataLoader(dataset, batch_size=16, sampler=DistributedSampler(dataset), collate_fn=collate)
    for feats in loader:
        z = encoder(feats)
        gathered = [torch.zeros_like(z) for _ in range(dist.get_world_size())]
        dist.all_gather(gathered, z)  # expect: RC104
        loss = torch.cat(gathered).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
