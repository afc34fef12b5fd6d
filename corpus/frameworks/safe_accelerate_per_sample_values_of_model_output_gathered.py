"""An accelerate evaluation loop logs one value per sample of each batch: it sizes a buffer of flags
by the model output's rows (`outputs.logits.size(0)`), which are as many as the batch the prepared
loader gave this rank, the same on every rank at each step (even batches), so the gather is
safe."""
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader


def evaluate(model, dataset):
    accelerator = Accelerator()
    loader = DataLoader(dataset, batch_size=16)
    model, loader = accelerator.prepare(model, loader)
    model.eval()
    totals = []
    for batch in loader:
        with torch.no_grad():
            outputs = model(batch["input_ids"])
        logits = outputs.logits
        flags = torch.zeros(logits.size(0))
        flags[logits.argmax(-1)[:, -1] == 0] = 1.0
        totals.append(accelerator.gather_for_metrics(flags))
    return torch.cat(totals).mean()
