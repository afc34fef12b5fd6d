"""A mixture-of-experts layer that skips its expert all-to-all when no token of this rank's batch
was routed off-device: the forward of a module is what calling it runs, so the training loop's
`model(batch)` reaches the all-to-all on the ranks whose batch routed tokens, and the others never
join it (the classic MoE dispatch hang). Reported at the skipped all-to-all in the layer, where the
fix goes, with the loop's batch as the per-rank source."""
import torch
import torch.distributed as dist
import torch.nn as nn


class ExpertParallelMoE(nn.Module):
    def __init__(self, dim: int, experts: int):
        super().__init__()
        self.router = nn.Linear(dim, experts)
        self.expert = nn.Linear(dim, dim)

    def forward(self, hidden):
        remote = self.router(hidden).argmax(-1) != 0
        if remote.any():
            routed = hidden[remote]
            received = torch.empty_like(routed)
            dist.all_to_all_single(received, routed)  # expect: RC104, RC101
            hidden = hidden + self.expert(received).sum()
        return hidden


class Block(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.moe = ExpertParallelMoE(dim, 8)

    def forward(self, x):
        return self.moe(x)


def train(loader, optimizer):
    model = Block(64)
    for batch in loader:
        loss = model(batch).pow(2).mean()
        loss.backward()
        optimizer.step()
