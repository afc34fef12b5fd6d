"""The fix: every rank enters sync_context(); rank 0 reads the synced states inside it."""
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
    with metric.sync_context():
        if dist.get_rank() == 0:
            print(f"correct={metric.correct.item()} total={metric.total.item()}")


def main(model, loader) -> None:
    metric = TokenAccuracy()
    for batch in loader:
        metric.update(model(batch["input_ids"]), batch["labels"])
    dump_states(metric)
