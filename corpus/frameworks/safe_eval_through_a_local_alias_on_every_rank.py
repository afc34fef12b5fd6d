"""The look-alike of rc101_eval_through_a_local_alias_of_the_ddp_model: every rank evaluates
through the local alias of the DDP model, and only rank 0 prints."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


class Trainer:
    def __init__(self, state):
        self.state = state
        self.state.model = DistributedDataParallel(self.state.model)

    def evaluate(self, batch):
        model = self.state.model
        with torch.no_grad():
            return model(batch)

    def fit(self, loader):
        for step, batch in enumerate(loader):
            loss = self.state.model(batch).sum()
            loss.backward()
            if step % 100 == 0:
                out = self.evaluate(batch)
                if dist.get_rank() == 0:
                    print(out.mean().item())
