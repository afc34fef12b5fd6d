"""Detection evaluation keeps each image's boxes above a score threshold and gathers the per-image
dicts with `accelerator.gather_for_metrics((predictions, targets))`: how many boxes an image keeps
is this rank's data, so the tensors nested in the gathered lists have different shapes."""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader


def evaluate(model, dataset, metric, threshold: float = 0.5):
    accelerator = Accelerator()
    model, loader = accelerator.prepare(model, DataLoader(dataset, batch_size=4, collate_fn=lambda b: tuple(zip(*b))))
    for images, targets in loader:
        with torch.no_grad():
            outputs = model(list(images))
        predictions = [{"boxes": o["boxes"][o["scores"] > threshold], "scores": o["scores"][o["scores"] > threshold]}
                       for o in outputs]
        predictions, targets = accelerator.gather_for_metrics((predictions, list(targets)))  # expect: RC104
        metric.update(predictions, targets)
    return metric.compute()
