"""The Hugging Face calling convention: the batch is a mapping spread into the model's keywords
(`model(**batch)`). What the model returns is computed from this rank's batch, so a test of it
is a test of per-rank data: a micro-batch skipped when its loss is not finite, on the ranks whose
batch gave one, leaves the others in the gradient all-reduce of the next backward."""
import torch
import torch.distributed as dist


def train_epoch(model, optimizer, loader):
    for batch in loader:
        outputs = model(**batch)
        if not torch.isfinite(outputs.loss):
            continue  # expect: RC103
        outputs.loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        optimizer.step()


def evaluate(model, loader):
    inputs = next(iter(loader))
    scores = model(*inputs)
    if scores.max() > 0.9:
        return None  # expect: RC102
    dist.all_reduce(scores)
    return scores
