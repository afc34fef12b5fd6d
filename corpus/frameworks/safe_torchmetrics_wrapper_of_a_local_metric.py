"""Lightning's spike detection keeps a running mean of the loss in
`Running(MeanMetric(sync_on_compute=False))`: the wrapper computes from its one metric's local
state, so reading it on rank 0 alone communicates with nobody."""
import torch.distributed as dist
from torchmetrics.aggregation import MeanMetric
from torchmetrics.wrappers import Running


class SpikeMonitor:
    def __init__(self, window: int):
        self.running_mean = Running(MeanMetric(dist_sync_on_step=False, sync_on_compute=False), window=window)

    def update(self, loss):
        self.running_mean.update(loss)
        if dist.get_rank() == 0:
            print("running mean", self.running_mean.compute().item())
