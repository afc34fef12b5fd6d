"""PENDING (framework-wrapped overrides): a project Metric subclass defines compute(); torchmetrics
wraps it in Metric.__init__ (_wrap_compute) so calling it still syncs states across processes.
rankcheck resolves `metric.compute()` to the project's method body and sees no collective."""
import torch
import torch.distributed as dist
from torchmetrics import Metric


class TokenAccuracy(Metric):
    def __init__(self) -> None:
        super().__init__()
        self.add_state("correct", default=torch.tensor(0), dist_reduce_fx="sum")
        self.add_state("total", default=torch.tensor(0), dist_reduce_fx="sum")

    def update(self, preds: torch.Tensor, target: torch.Tensor) -> None:
        self.correct += (preds == target).sum()
        self.total += target.numel()

    def compute(self) -> torch.Tensor:
        return self.correct.float() / self.total


def report(metric: TokenAccuracy) -> None:
    if dist.get_rank() == 0:
        print(f"token accuracy {metric.compute().item():.4f}")  # expect: RC101


def main(model, loader) -> None:
    metric = TokenAccuracy()
    for batch in loader:
        metric.update(model(batch["input_ids"]).argmax(-1), batch["labels"])
    report(metric)
