"""Object-detection evaluation under accelerate: each image's predictions and ground truths are a
dict of tensors (boxes, scores, labels) with as many rows as boxes, and the lists of them are
gathered with `accelerator.gather_for_metrics((predictions, ground_truths))`.

Thread: https://github.com/huggingface/accelerate/issues/2643 ("How to use gather_for_metrics for object detection models?")
Project: huggingface/accelerate
What went wrong: the number of boxes differs per image, so the tensors gathered at the same
position have different shapes on different processes; accelerate's check raised "Impossible to
apply the desired operation due to inadequate shapes", and without the check the all-gather of
tensors of different sizes hangs or corrupts data (accelerate#19).
Fix (accelerate PR 2710, "allow gather_for_metrics to be more flexible"): gather such nested
structures as Python objects, `gather_for_metrics(..., use_gather_object=True)`.
Expected rankcheck finding: RC104 on the `gather_for_metrics` of the per-image dicts.
(The model and data pipeline are reconstructed; the gather is the thread's.)
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
        predictions = [{"boxes": o["boxes"], "scores": o["scores"], "labels": o["labels"]} for o in outputs]
        ground_truths = [{"boxes": t["boxes"], "labels": t["labels"]} for t in targets]
        predictions, ground_truths = accelerator.gather_for_metrics((predictions, ground_truths))  # expect: RC104
        metric.update(predictions, ground_truths)
    return metric.compute()
