"""The same evaluation pads every batch's predictions and labels to the longest across processes
before gathering (labels padded with the ignored index): the loop over the dict's two entries
runs twice on every rank, and every gather gets one shape."""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader


def evaluate(model, dataset, batch_size):
    accelerator = Accelerator()
    loader = accelerator.prepare(DataLoader(dataset, batch_size=batch_size))
    gathered = {"preds": [], "labels": []}
    model.eval()
    with torch.no_grad():
        for batch in loader:
            logits = model(batch["input_ids"])
            outputs = {"preds": logits.argmax(-1), "labels": batch["labels"]}
            for name, value in outputs.items():
                padded = accelerator.pad_across_processes(value, dim=1, pad_index=-100)
                gathered[name].append(accelerator.gather_for_metrics(padded))
    preds, labels = torch.cat(gathered["preds"]), torch.cat(gathered["labels"])
    keep = labels != -100
    return preds[keep], labels[keep]
