"""A training loop's logging helper: the main process adds the learning rate to the step's metrics
(`metrics.update({"lr": ...})`) before every metric is averaged across ranks one all_reduce per
key. The main process has one key more, issues one all_reduce more, and waits in it alone.
"""
import torch
import torch.distributed as dist


def average_metrics(metrics, optimizer, is_main_process):
    if is_main_process:
        metrics.update({"lr": torch.tensor(optimizer.param_groups[0]["lr"])})
    averaged = {}
    for name in sorted(metrics):  # expect: RC103
        value = metrics[name].clone()
        dist.all_reduce(value)
        averaged[name] = value / dist.get_world_size()
    return averaged


def train(model, optimizer, loader):
    is_main_process = dist.get_rank() == 0
    for batch in loader:
        loss = model(batch).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(average_metrics({"loss": loss.detach()}, optimizer, is_main_process))
