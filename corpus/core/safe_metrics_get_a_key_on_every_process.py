"""The look-alike of rc103_metrics_get_a_key_on_the_main_process: every process adds the learning
rate to the step's metrics (`metrics.update({"lr": ...})`, a mapping of constant keys), so every
rank averages the same keys with one all_reduce each; only the main process prints them.
"""
import torch
import torch.distributed as dist


def average_metrics(metrics, optimizer):
    metrics.update({"lr": torch.tensor(optimizer.param_groups[0]["lr"])})
    averaged = {}
    for name in sorted(metrics):
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
        averaged = average_metrics({"loss": loss.detach()}, optimizer)
        if is_main_process:
            print(averaged)
