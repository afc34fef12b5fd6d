"""Token-classification evaluation keeps only the labelled positions of each batch, collects the
kept predictions and labels in a dict and gathers each entry: how many positions a rank kept is
its own data, so the gathers of the dict's values get tensors of different lengths."""
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
            keep = batch["labels"] != -100
            outputs = {"preds": logits.argmax(-1)[keep], "labels": batch["labels"][keep]}
            for name, value in outputs.items():
                gathered[name].append(accelerator.gather_for_metrics(value))  # expect: RC104
            pair = accelerator.gather_for_metrics((outputs["preds"], outputs["labels"]))  # expect: RC104
            del pair
    return {name: torch.cat(parts) for name, parts in gathered.items()}
