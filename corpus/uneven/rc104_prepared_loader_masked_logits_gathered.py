"""The accelerate evaluation loop of the examples: the loader goes through `accelerator.prepare`,
which hands each process its own shard of every batch; the predictions of the labelled positions
only (`logits[labels != -100]`) are gathered as they are, so each rank passes its own count."""
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
        keep = batch["labels"] != -100
        preds = accelerator.gather_for_metrics(logits.argmax(-1)[keep])  # expect: RC104
        labels = accelerator.gather_for_metrics(batch["labels"][keep])  # expect: RC104
        correct += (preds == labels).sum().item()
        total += labels.numel()
    return correct / max(total, 1)
