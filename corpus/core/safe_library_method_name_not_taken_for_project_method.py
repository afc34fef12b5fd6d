"""The look-alike of a call on an object of unknown type: the project's one `step` method (a meter
that all-reduces) is not what `optimizer.step()` runs. Optimizers, schedulers and engines all have
a `step`, so a call of it on a parameter nothing types is left to the library, and rank 0 stepping
its own scheduler is no collective."""
import torch
import torch.distributed as dist


class ThroughputMeter:
    def __init__(self):
        self.count = torch.zeros(1)

    def step(self, n):
        self.count += n
        dist.all_reduce(self.count)


def train(model, optimizer, scheduler, loader, meter):
    for batch in loader:
        loss = model(batch).sum()
        loss.backward()
        optimizer.step()
        meter.step(len(batch))
        if dist.get_rank() == 0:
            scheduler.step()
