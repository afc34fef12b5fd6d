"""trl's PPO early stopping as fixed in trl#254: the policy KL of this process's mini-batch decides
alone only where there is no other process (`not self.is_distributed and kl > limit`, one test
joining the flag and the data); in a distributed job every rank all-reduces the KL first and
they stop together. The look-alike that decides on the local KL in the distributed arm is in
rc103_early_stop_on_local_kl_when_distributed.py."""
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
        if not self.is_distributed and policykl > 1.5 * self.target_kl:
            self.optimizer.zero_grad()
            stop = True
        elif self.is_distributed:
            dist.all_reduce(policykl, dist.ReduceOp.SUM)
            policykl /= dist.get_world_size()
            if policykl > 1.5 * self.target_kl:
                self.optimizer.zero_grad()
                stop = True
        return stop

    def step(self, mini_batches):
        for batch in mini_batches:
            logprobs = self.model(batch["queries"])
            policykl = (batch["old_logprobs"] - logprobs).mean().detach()
            if self.early_stop(policykl):
                break
