"""Look-alikes of agreement inside a distributed-only branch: here the all_reduce that would agree
on the NaN test runs only when a flag asks for it. With the flag off, every rank is still in the
job and tests its own loss, so the `continue` skips the backward on some ranks only."""
import torch
import torch.distributed as dist


class Actions:
    def __init__(self, local_rank, agree_on_nan=False):
        self.local_rank = local_rank
        self.agree_on_nan = agree_on_nan

    def train(self, model, loader, optimizer):
        for batch in loader:
            loss = model(batch).sum()
            checker = loss.detach().clone()
            if self.agree_on_nan:
                dist.all_reduce(checker, op=dist.ReduceOp.MAX)
            if torch.isnan(checker).any():
                optimizer.zero_grad()
                continue  # expect: RC103
            loss.backward()
            dist.all_reduce(loss)
