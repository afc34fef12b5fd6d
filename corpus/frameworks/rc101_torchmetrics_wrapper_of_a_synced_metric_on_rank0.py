"""The same monitor with the metric left at its default (`sync_on_compute=True`): the wrapper's
compute all-gathers the states, and rank 0 reads it alone."""
import torch.distributed as dist
from torchmetrics.aggregation import MeanMetric
from torchmetrics.wrappers import Running


class SpikeMonitor:
    def __init__(self, window: int):
        self.running_mean = Running(MeanMetric(), window=window)

    def update(self, loss):
        self.running_mean.update(loss)
        if dist.get_rank() == 0:
            print("running mean", self.running_mean.compute().item())  # expect: RC101
