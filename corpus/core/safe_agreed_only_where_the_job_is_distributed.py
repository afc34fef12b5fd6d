"""The NaN check of NeMo's fixed training loop (NVIDIA-NeMo/Speech PR 637): the loss is all-reduced
with MAX before the test, but only `if self.local_rank is not None:`, since a run without a launcher
has no group. Whether the process has a rank is alike on every process, and the arm without one runs
only where there is no other process: past the branch the test reads the agreed value. Also with
`dist.is_initialized()`. The look-alikes are in rc103_agreed_only_under_a_flag.py."""
import torch
import torch.distributed as dist


class Actions:
    def __init__(self, local_rank=None):
        self.local_rank = local_rank

    def train(self, model, loader, optimizer):
        for batch in loader:
            loss = model(batch).sum()
            checker = loss.detach().clone()
            if self.local_rank is not None:
                dist.all_reduce(checker, op=dist.ReduceOp.MAX)
            if torch.isnan(checker).any():
                optimizer.zero_grad()
                continue
            loss.backward()
            dist.all_reduce(loss)


def evaluate(model, loader):
    for batch in loader:
        found = torch.tensor([float(batch.numel() == 0)])
        if dist.is_initialized():
            dist.all_reduce(found, op=dist.ReduceOp.MAX)
        if found.item() > 0:
            break
        dist.all_reduce(model(batch).sum())
