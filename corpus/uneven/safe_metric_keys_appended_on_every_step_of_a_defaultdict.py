"""The fixed form of the NaN-step metrics: every step appends to every key ("nan_steps" gets a 0 or
a 1), so every rank's `defaultdict(list)` has the same keys and issues one all-reduce per key;
a key written up front (`{"loss": [], "nan_steps": []}`) and appended to under the test is as good:
the key set is fixed, only the lists' lengths differ, and the all-reduce takes one number a key."""
from collections import defaultdict

import torch
import torch.distributed as dist


def train_epoch(model, optimizer, loader):
    metrics = defaultdict(list)
    for batch in loader:
        loss = model(batch).mean()
        finite = bool(torch.isfinite(loss))
        metrics["nan_steps"].append(0.0 if finite else 1.0)
        if finite:
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        metrics["loss"].append(loss.item() if finite else 0.0)
    for name in sorted(metrics):
        value = torch.tensor(sum(metrics[name]) / len(metrics[name]))
        dist.all_reduce(value)


def validate(model, loader):
    metrics = {"loss": [], "skipped": []}
    for batch in loader:
        loss = model(batch).mean()
        if not torch.isfinite(loss):
            metrics["skipped"].append(1.0)
            continue
        metrics["loss"].append(loss.item())
    for name in metrics:
        value = torch.tensor(float(len(metrics[name])))
        dist.all_reduce(value)
