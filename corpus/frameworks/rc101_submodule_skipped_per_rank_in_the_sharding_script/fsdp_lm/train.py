"""An examples tree: this script trains a language model with FSDP. Its model skips the adapter on
batches without padding, per rank: under FSDP the adapter's forward all-gathers its parameters,
so a rank that skips it leaves the others in the all-gather."""
import functools

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp.wrap import size_based_auto_wrap_policy


class LanguageModel(nn.Module):
    def __init__(self, vocab: int, dim: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.adapter = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, vocab)

    def forward(self, ids, mask):
        h = self.embed(ids)
        if (mask == 0).any():
            h = h + self.adapter(h)  # expect: RC101
        return self.head(h)


def main(loader, vocab: int, dim: int):
    dist.init_process_group("nccl")
    torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
    model = FSDP(LanguageModel(vocab, dim).cuda(), auto_wrap_policy=functools.partial(size_based_auto_wrap_policy, min_num_params=1_000))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for ids, mask in loader:
        loss = model(ids.cuda(), mask.cuda()).logsumexp(-1).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
