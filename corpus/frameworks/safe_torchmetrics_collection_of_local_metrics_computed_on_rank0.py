"""A MetricCollection built of metrics that were all built with `sync_on_compute=False`: its
compute() computes each of them from this rank's states, so rank 0 alone may call it."""
import torch.distributed as dist
from torchmetrics import MetricCollection
from torchmetrics.classification import MulticlassAccuracy, MulticlassF1Score


def report(preds, targets, num_classes: int, device):
    metrics = MetricCollection(
        {
            "acc": MulticlassAccuracy(num_classes=num_classes, sync_on_compute=False),
            "f1": MulticlassF1Score(num_classes=num_classes, sync_on_compute=False),
        }
    ).to(device)
    metrics.update(preds, targets)
    if dist.get_rank() == 0:
        print({name: value.item() for name, value in metrics.compute().items()})
