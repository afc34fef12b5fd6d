"""The same layer as expert-parallel code writes it: every rank enters the all-to-all, with an
empty split when it routed nothing, and what the forward decides by is the layer's configuration,
the same on every rank."""
import torch
import torch.distributed as dist
import torch.nn as nn


class ExpertParallelMoE(nn.Module):
    def __init__(self, dim: int, experts: int, aux_loss: bool):
        super().__init__()
        self.router = nn.Linear(dim, experts)
        self.expert = nn.Linear(dim, dim)
        self.aux_loss = aux_loss

    def forward(self, hidden):
        logits = self.router(hidden)
        counts = torch.zeros(8)
        dist.all_reduce(counts)
        if self.aux_loss:
            hidden = hidden + logits.softmax(-1).mean()
        return hidden + self.expert(hidden)


class Block(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.moe = ExpertParallelMoE(dim, 8, aux_loss=True)

    def forward(self, x):
        return self.moe(x)


def train(loader, optimizer):
    model = Block(64)
    for batch in loader:
        loss = model(batch).pow(2).mean()
        loss.backward()
        optimizer.step()
