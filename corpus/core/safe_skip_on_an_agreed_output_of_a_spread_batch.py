"""Look-alikes of a skip on the output of `model(**batch)`: the ranks agree on the test first
(an all-reduced flag, the usual fix), or the test reads only the configuration spread in beside
the batch, which every rank has alike."""
import torch
import torch.distributed as dist


def train_epoch(model, optimizer, loader):
    for batch in loader:
        outputs = model(**batch)
        bad = torch.tensor(float(not torch.isfinite(outputs.loss)))
        dist.all_reduce(bad)
        if bad.item() > 0:
            continue
        outputs.loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        optimizer.step()


def generate(model, options, prompts):
    settings = dict(**options)
    if settings.get("sample"):
        return None
    out = model(prompts, **settings)
    dist.all_reduce(out)
    return out
