"""Ring attention with a per-token loss: each rank takes its own slice of the labels, from its
offset to the end, so the slices have different lengths, and `reduction="none"` keeps one loss per
token. All-reducing those per-token losses over the ring gives tensors of different lengths on
each rank: the all_reduce mismatches.
"""
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


class RingTokenLoss(nn.Module):
    def __init__(self, ring_group):
        super().__init__()
        self.per_token = nn.CrossEntropyLoss(reduction="none")
        self.ring_group = ring_group
        self.ring_rank = dist.get_rank(ring_group)

    def forward(self, logits, labels):
        labels = labels[..., self.ring_rank * 8:]
        losses = self.per_token(logits.view(-1, logits.size(-1)), labels.reshape(-1))
        dist.all_reduce(losses, group=self.ring_group)  # expect: RC104
        return losses

    def functional(self, logits, labels):
        labels = labels[..., self.ring_rank * 8:]
        losses = F.cross_entropy(logits.flatten(0, 1), labels.flatten(), reduction="none")
        dist.all_reduce(losses, group=self.ring_group)  # expect: RC104
        return losses
