"""The same evaluation gathers the per-image dicts as Python objects (`use_gather_object=True`,
accelerate >= 0.30): nothing needs a shape in common."""
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
        predictions, targets = accelerator.gather_for_metrics((predictions, list(targets)), use_gather_object=True)
        metric.update(predictions, targets)
    return metric.compute()
