"""The same loop pads each batch's predictions and labels across processes before gathering
(labels with the ignored index) and drops the ignored positions after the gather: every rank
passes tensors of one shape."""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader


def evaluate(model, eval_dataset, batch_size):
    accelerator = Accelerator()
    model = accelerator.prepare(model)
    shards = accelerator.prepare(DataLoader(eval_dataset, batch_size=batch_size))
    correct = total = 0
    model.eval()
    for batch in shards:
        with torch.no_grad():
            logits = model(batch["input_ids"])
        preds = accelerator.pad_across_processes(logits.argmax(-1), dim=1, pad_index=-100)
        labels = accelerator.pad_across_processes(batch["labels"], dim=1, pad_index=-100)
        preds, labels = accelerator.gather_for_metrics((preds, labels))
        keep = labels != -100
        correct += (preds[keep] == labels[keep]).sum().item()
        total += keep.sum().item()
    return correct / max(total, 1)
