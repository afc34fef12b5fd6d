"""Test-time evaluation of a segmentation project with a torchmetrics MetricCollection. The test
runs on one process, so the metrics are built with `sync_on_compute=False`: compute() then works
on the local state and issues no collective."""
import torch
from torchmetrics import MetricCollection
from torchmetrics.classification import MulticlassAccuracy, MulticlassF1Score, MulticlassJaccardIndex


def build_metrics(num_classes: int, device) -> MetricCollection:
    return MetricCollection(
        {
            "acc": MulticlassAccuracy(num_classes=num_classes, sync_on_compute=False),
            "f1": MulticlassF1Score(num_classes=num_classes, average="macro", sync_on_compute=False),
            "miou": MulticlassJaccardIndex(num_classes=num_classes, sync_on_compute=False),
        }
    ).to(device)


@torch.no_grad()
def test(model, test_loader, metrics: MetricCollection, device):
    model.eval()
    metrics.reset()
    for images, masks in test_loader:
        logits = model(images.to(device))
        metrics.update(logits.argmax(1), masks.to(device))
    return {name: value.item() for name, value in metrics.compute().items()}
