"""The look-alike: the same benchmark classes, but the rank-0 sanity forward runs the module the
base class kept before wrapping it (`self._net`), whose forward does not communicate."""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(16)
        self.fc = nn.Linear(16, 4)

    def forward(self, x):
        return self.fc(self.bn(x))


class Benchmark:
    """The base class wraps whatever model a subclass builds, and keeps the module itself."""

    def __init__(self, distributed: bool):
        self._distributed = distributed
        self._model = None
        self._net = None
        self._optimizer = None

    def _create_model(self):
        raise NotImplementedError

    def _create_optimizer(self):
        self._net = self._model
        if self._distributed:
            self._model = DistributedDataParallel(self._model)
        self._optimizer = torch.optim.SGD(self._model.parameters(), lr=0.1)

    def run(self):
        self._create_model()
        self._create_optimizer()
        self._sanity_check()

    def _sanity_check(self):
        pass


class NetBenchmark(Benchmark):
    def _create_model(self):
        self._model = Net()

    def _sanity_check(self):
        if dist.get_rank() == 0:
            with torch.no_grad():
                self._net(torch.randn(8, 16))
