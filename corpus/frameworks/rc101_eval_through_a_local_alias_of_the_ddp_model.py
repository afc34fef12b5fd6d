"""A trainer keeps its DDP model in an object of training state (`self.state.model`, wrapped in
`__init__`), and the evaluation step calls it through a local name (`model = self.state.model`),
on rank 0 only: the DDP forward's buffer broadcast waits for the other ranks. (The look-alike
runs the same evaluation on every rank.)"""
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
            if dist.get_rank() == 0 and step % 100 == 0:
                self.evaluate(batch)  # expect: RC101
