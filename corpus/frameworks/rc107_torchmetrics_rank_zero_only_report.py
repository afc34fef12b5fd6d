"""A @rank_zero_only report function computes a MetricCollection: compute() all-gathers states from
every process, but only rank 0 runs the function."""
import torch
from lightning.pytorch.utilities import rank_zero_only
from torchmetrics import MetricCollection
from torchmetrics.regression import MeanAbsoluteError, MeanSquaredError


@rank_zero_only
def report(metrics: MetricCollection, epoch: int) -> None:  # expect: RC107
    values = metrics.compute()
    print(epoch, {name: round(v.item(), 4) for name, v in values.items()})


def run(model, loader, epochs: int) -> None:
    metrics = MetricCollection({"mae": MeanAbsoluteError(), "mse": MeanSquaredError()})
    for epoch in range(epochs):
        for x, y in loader:
            metrics.update(model(x).squeeze(-1), y)
        report(metrics, epoch)
        metrics.reset()
