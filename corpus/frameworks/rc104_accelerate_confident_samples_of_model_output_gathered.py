"""The same loop gathers only the samples the model is confident about: how many of them a batch
holds is this rank's own, so the tensors given to the all-gather differ in length between ranks."""
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
        confidence = outputs.logits.softmax(-1).amax(-1).mean(-1)
        confident = confidence[confidence > 0.9]
        totals.append(accelerator.gather_for_metrics(confident))  # expect: RC104
    return torch.cat(totals).mean()
