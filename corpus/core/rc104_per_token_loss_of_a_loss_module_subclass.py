"""The look-alike of safe_scalar_loss_of_a_loss_module_subclass.py that hangs: the project's
loss subclass is built with `reduction="none"`, so `super().forward(...)` gives one loss per
token; the step all-gathers those per-token losses, whose number is how many tokens this rank's
batch holds once trimmed to its longest sequence, so ranks pass tensors of other shapes.
"""
import torch
import torch.distributed as dist
from torch import nn


class TokenLossWithZLoss(nn.CrossEntropyLoss):
    def __init__(self, eps=1e-4, reduction="mean"):
        super().__init__(reduction=reduction)
        self.eps = eps

    def forward(self, input, target):
        return super().forward(input, target) + self.eps * torch.logsumexp(input, dim=-1).mean()


def evaluate(model, loader, vocab_size):
    loss = TokenLossWithZLoss(1e-4, reduction="none")
    for inputs, targets, lengths in loader:
        longest = int(lengths.max())
        inputs, targets = inputs[:, :longest], targets[:, :longest]
        out = model(inputs)
        per_token = loss(out.reshape(-1, vocab_size), targets.reshape(-1))
        gathered = [torch.zeros_like(per_token) for _ in range(dist.get_world_size())]
        dist.all_gather(gathered, per_token)  # expect: RC104
        print(torch.cat(gathered).mean())
