"""Look-alikes of a tracker fed this rank's metric: the trainer all-reduces the metric's counts
before it hands the value to the tracker (AllenNLP's fix for #4794: reduce in `get_metric`), so
every rank's tracker counts the same epochs and all leave the loop together; a meter updated with
a value every rank agrees on (the reduced loss) decides alike everywhere; and a tracker on one
object does not make another object's state per-rank."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class PatienceTracker:
    def __init__(self, patience):
        self.patience = patience
        self.best = None
        self.bad_epochs = 0

    def add_metric(self, metric):
        if self.best is None or metric > self.best:
            self.best = metric
            self.bad_epochs = 0
        else:
            self.bad_epochs += 1

    def should_stop_early(self):
        return self.bad_epochs >= self.patience


class AverageMeter:
    def __init__(self):
        self.total = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.total += value * n
        self.count += n

    @property
    def avg(self):
        return self.total / max(self.count, 1)


def reduced_accuracy_on(model, validation_loader):
    counts = torch.zeros(2)
    with torch.no_grad():
        for batch in validation_loader:
            logits = model(**batch)
            counts[0] += (logits.argmax(-1) == batch["labels"]).sum()
            counts[1] += len(batch["labels"])
    dist.all_reduce(counts)
    return float(counts[0] / counts[1].clamp(min=1))


def fit(model, optimizer, train_loader, validation_loader, epochs, patience, local_rank):
    dist.init_process_group("nccl")
    ddp_model = DDP(model, device_ids=[local_rank])
    tracker = PatienceTracker(patience)
    for epoch in range(epochs):
        for batch in train_loader:
            loss = ddp_model(**batch).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        tracker.add_metric(reduced_accuracy_on(ddp_model.module, validation_loader))
        if tracker.should_stop_early():
            break


def sync_when_good(model, val_loader, epochs):
    meter = AverageMeter()
    other = AverageMeter()
    for batch in val_loader:
        loss = model(**batch).mean()
        dist.all_reduce(loss)
        meter.update(float(loss))
        other.update(float(loss.detach()))
    if meter.avg > 0.5:
        dist.barrier()
    fresh = AverageMeter()
    fresh.update(epochs)
    if fresh.avg > 3:
        dist.barrier()
