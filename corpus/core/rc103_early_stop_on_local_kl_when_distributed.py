"""The look-alike of trl#254's fix that keeps the bug: the one-process test is there, but the
distributed arm still decides on this process's own KL (`self.is_distributed and kl > limit`),
so one rank leaves the mini-batch loop while the others wait for it in the next forward."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class PPOTrainer:
    def __init__(self, model, optimizer, target_kl, distributed, local_rank):
        self.model = DDP(model, device_ids=[local_rank]) if distributed else model
        self.optimizer = optimizer
        self.target_kl = target_kl
        self.is_distributed = distributed

    def early_stop(self, policykl):
        stop = False
        if self.is_distributed and policykl > 1.5 * self.target_kl:
            self.optimizer.zero_grad()
            stop = True
        return stop

    def step(self, mini_batches):
        for batch in mini_batches:
            logprobs = self.model(batch["queries"])
            policykl = (batch["old_logprobs"] - logprobs).mean().detach()
            if self.early_stop(policykl):
                break  # expect: RC103
