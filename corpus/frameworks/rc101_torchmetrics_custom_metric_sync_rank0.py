"""A project metric derived from torchmetrics.Metric is synced explicitly (Metric.sync all-gathers
the states) only on rank 0 before reading its raw states."""
import torch
import torch.distributed as dist
from torchmetrics import Metric


class TokenAccuracy(Metric):
    def __init__(self, ignore_index: int = -100) -> None:
        super().__init__()
        self.ignore_index = ignore_index
        self.add_state("correct", default=torch.tensor(0), dist_reduce_fx="sum")
        self.add_state("total", default=torch.tensor(0), dist_reduce_fx="sum")

    def update(self, logits: torch.Tensor, labels: torch.Tensor) -> None:
        mask = labels != self.ignore_index
        self.correct += (logits.argmax(-1)[mask] == labels[mask]).sum()
        self.total += mask.sum()


def dump_states(metric: TokenAccuracy) -> None:
    if dist.get_rank() == 0:
        metric.sync()  # expect: RC101
        print(f"correct={metric.correct.item()} total={metric.total.item()}")
        metric.unsync()


def main(model, loader) -> None:
    metric = TokenAccuracy()
    for batch in loader:
        metric.update(model(batch["input_ids"]), batch["labels"])
    dump_states(metric)
