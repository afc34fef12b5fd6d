"""Per-step metrics kept in a `defaultdict(list)`: every step appends its loss, and a step whose
loss is not finite also appends to a "nan_steps" key the others never create. At the end of the
epoch one all-reduce per key averages the metrics, so a rank that saw a NaN issues one all-reduce
more than the ranks that did not, and they pair with the wrong keys (or hang)."""
from collections import defaultdict

import torch
import torch.distributed as dist


def train_epoch(model, optimizer, loader):
    metrics = defaultdict(list)
    for batch in loader:
        loss = model(batch).mean()
        if not torch.isfinite(loss):
            metrics["nan_steps"].append(1.0)
            continue
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        metrics["loss"].append(loss.item())
    averaged = {}
    for name in sorted(metrics):  # expect: RC103
        value = torch.tensor(sum(metrics[name]) / len(metrics[name]))
        dist.all_reduce(value)
        averaged[name] = value.item() / dist.get_world_size()
    return averaged
