"""Flags kept on the trainer: the step records a "nan_loss" entry only on the steps where this
rank's loss is not finite (and skips the update), and the epoch-end hook (called by the framework
on every rank) all-reduces one flag per key of `self.flags`. A rank that saw a NaN has one key more
than the others, so it issues one all-reduce more and the ranks pair the wrong keys (or hang)."""
import torch
import torch.distributed as dist


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.flags = {}

    def training_step(self, batch):
        loss = self.model(batch).mean()
        self.flags["steps"] = 1.0
        if not torch.isfinite(loss):
            self.flags["nan_loss"] = 1.0
        else:
            loss.backward()
            self.optimizer.step()

    def on_epoch_end(self):
        for name in sorted(self.flags):  # expect: RC103
            value = torch.tensor(self.flags[name])
            dist.all_reduce(value)
        self.flags = {}
