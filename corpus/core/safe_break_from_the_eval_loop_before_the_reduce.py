"""The look-alike of rc102_return_from_inside_the_eval_loop.py: the helper stops reading batches
with `break` on a non-finite loss, and the loop issues no collective, so every rank still reaches
the all-reduce after it (only the values it contributes differ)."""
import torch
import torch.distributed as dist


def evaluate(model, loader):
    total = torch.zeros(2)
    for batch in loader:
        loss = model(batch).mean()
        if not torch.isfinite(loss):
            break
        total += torch.stack([loss.detach(), torch.ones(())])
    dist.all_reduce(total)
    return (total[0] / total[1]).item()
