"""An early-stopping tracker kept in a local object: each epoch the trainer hands it this rank's
validation metric (`tracker.add_metric(...)`), the tracker counts the epochs without improvement
on itself, and the trainer leaves the epoch loop when `tracker.should_stop_early()` says so (the
shape of AllenNLP's MetricTracker and of most hand-written patience counters). The metric is
computed from this rank's own validation share, so one rank runs out of patience first and
leaves while the others start the next epoch and wait for it in DDP's gradient all-reduce.
A second look: a running-average meter whose `avg` decides whether a rank joins a barrier."""
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


def accuracy_on(model, validation_loader):
    correct = total = 0
    with torch.no_grad():
        for batch in validation_loader:
            logits = model(**batch)
            correct += int((logits.argmax(-1) == batch["labels"]).sum())
            total += len(batch["labels"])
    return correct / max(total, 1)


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
        tracker.add_metric(accuracy_on(ddp_model.module, validation_loader))
        if tracker.should_stop_early():
            break  # expect: RC103


def sync_when_good(model, val_loader):
    meter = AverageMeter()
    for batch in val_loader:
        meter.update(float(model(**batch).mean()), len(batch))
    if meter.avg > 0.5:
        dist.barrier()  # expect: RC101
