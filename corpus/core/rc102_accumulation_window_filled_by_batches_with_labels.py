"""The look-alike of safe_accumulation_step_on_a_full_window: the step function caches only the
batches that carry labels (`if batch["labels"].any():`), so how soon a rank's window fills depends
on its own data. A rank whose batches had fewer labels returns None while the others go on to the
accumulated step's all_reduce.
"""
import torch.distributed as dist


def train_step(model, batch, accum_state, accum_freq):
    accum_batches, accum_features = accum_state
    if batch["labels"].any():
        accum_batches.append(batch)
    if len(accum_batches) < accum_freq:
        return None  # expect: RC102
    loss = model(batch).mean()
    dist.all_reduce(loss)
    return loss


def train(model, loader, accum_freq):
    accum_state = ([], {})
    for batch in loader:
        result = train_step(model, batch, accum_state, accum_freq)
        if result is None:
            continue
        dist.barrier()
