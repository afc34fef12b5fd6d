"""open_lm's training step, reduced: the criterion is either `nn.CrossEntropyLoss()` or a project
subclass that adds a z-loss to `super().forward(...)`, chosen by the configuration and passed
into the epoch loop. Either gives one scalar (the base class defaults to `reduction="mean"`), so
the loss all-reduced after the gradient-accumulation loop has one shape on every rank, though
each rank trims its batch to its own longest sequence: no RC104. Look-alike of
rc104_per_token_loss_of_a_loss_module_subclass.py.
"""
import torch
import torch.distributed as dist
from torch import nn


class CrossEntropyLossWithZLoss(nn.CrossEntropyLoss):
    def __init__(self, eps=1e-4, reduction="mean"):
        super().__init__(reduction=reduction)
        self.eps = eps

    def forward(self, input, target):
        return super().forward(input, target) + self.eps * torch.square(torch.logsumexp(input, dim=-1)).mean()


def train_one_epoch(model, loader, loss, accum, vocab_size):
    for step, (inputs, targets, lengths) in enumerate(loader):
        longest = int(lengths.max())
        inputs, targets = inputs[:, :longest], targets[:, :longest]
        per_batch = inputs.shape[0] // accum
        for ii in range(accum):
            inputs_ii = inputs[ii * per_batch : (ii + 1) * per_batch]
            if inputs_ii.shape[0] == 0:
                break
            targets_ii = targets[ii * per_batch : (ii + 1) * per_batch]
            out = model(inputs_ii)
            local_loss = loss(out.reshape(-1, vocab_size), targets_ii.reshape(-1)) * inputs_ii.shape[0] / inputs.shape[0]
            local_loss.backward()
            total_loss = local_loss if ii == 0 else total_loss + local_loss
        global_loss = total_loss.detach().clone()
        dist.all_reduce(global_loss)
        print(step, global_loss.item())


def main(model, loader, z_loss_coefficient, accum, vocab_size):
    loss = nn.CrossEntropyLoss()
    if z_loss_coefficient != 0.0:
        loss = CrossEntropyLossWithZLoss(z_loss_coefficient)
    train_one_epoch(model, loader, loss, accum, vocab_size)
