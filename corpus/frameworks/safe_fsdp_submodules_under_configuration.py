"""An FSDP-trained model whose forward chooses submodules by its configuration (the same on every
rank) and applies a parameter-free dropout only on some steps: every rank runs the same sharded
submodules, and the dropout gathers nothing."""
import functools

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp.wrap import size_based_auto_wrap_policy


class Encoder(nn.Module):
    def __init__(self, dim: int, use_adapter: bool):
        super().__init__()
        self.use_adapter = use_adapter
        self.body = nn.Linear(dim, dim)
        self.adapter = nn.Linear(dim, dim)
        self.dropout = nn.Dropout(0.1)
        self.act = nn.GELU()

    def forward(self, x, step: int):
        h = self.act(self.body(x))
        if self.use_adapter:
            h = h + self.adapter(h)
        if x.sum() > 0:
            h = self.dropout(h)
        return h


def main(loader, dim: int, use_adapter: bool):
    dist.init_process_group("nccl")
    torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
    model = FSDP(Encoder(dim, use_adapter).cuda(), auto_wrap_policy=functools.partial(size_based_auto_wrap_policy, min_num_params=10_000))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for step, batch in enumerate(loader):
        loss = model(batch.cuda(), step).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
