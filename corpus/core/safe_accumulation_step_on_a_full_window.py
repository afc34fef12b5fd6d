"""open_clip-shaped gradient accumulation: the step function is handed the accumulation state (a
list of cached batches) and appends this rank's batch to it; until it holds `accum_freq` batches
it returns None and the loop goes on to the next batch. Every rank appends one batch per round,
so every rank's window fills on the same round and they reach the all_reduce together.
"""
import torch.distributed as dist


def train_step(model, batch, accum_state, accum_freq):
    accum_batches, accum_features = accum_state
    accum_batches.append(batch)
    if len(accum_batches) < accum_freq:
        return None
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
