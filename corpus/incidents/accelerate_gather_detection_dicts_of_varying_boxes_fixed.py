"""Safe twin of accelerate_gather_detection_dicts_of_varying_boxes: the per-image dicts are gathered
as Python objects (`use_gather_object=True`, accelerate PR 2710), which has no shape to agree on.

Thread: https://github.com/huggingface/accelerate/issues/2643
"""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader


def collate(batch):
    return tuple(zip(*batch))


def evaluate(model, dataset, metric, batch_size: int = 4):
    accelerator = Accelerator()
    model, loader = accelerator.prepare(model, DataLoader(dataset, batch_size=batch_size, collate_fn=collate))
    model.eval()
    for images, targets in loader:
        with torch.no_grad():
            outputs = model(list(images))
        predictions = [{"boxes": o["boxes"].cpu(), "scores": o["scores"].cpu(), "labels": o["labels"].cpu()} for o in outputs]
        ground_truths = [{"boxes": t["boxes"].cpu(), "labels": t["labels"].cpu()} for t in targets]
        predictions, ground_truths = accelerator.gather_for_metrics((predictions, ground_truths), use_gather_object=True)
        metric.update(predictions, ground_truths)
    return metric.compute()
