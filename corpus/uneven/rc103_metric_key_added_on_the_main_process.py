"""A training step averages its metrics across ranks one key at a time, and the main process adds
the learning rate to the dict before the loop (to log it along): rank 0 runs one all-reduce more
than the others, which wait in the next step's collective against its extra one."""
import torch
import torch.distributed as dist


def reduce_metrics(loss, correct, total, scheduler):
    metrics = {"loss": loss.detach(), "accuracy": correct.float() / total}
    if dist.get_rank() == 0:
        metrics["lr"] = torch.tensor(scheduler.get_last_lr()[0])
    for name, value in metrics.items():  # expect: RC103
        dist.all_reduce(value)
        metrics[name] = value / dist.get_world_size()
    return metrics
