"""A training step that accumulates the loss over the micro-batches it is given, asserts it got
some, and reduces it over the ranks."""
import torch.distributed as dist


def train_step(model, microbatches):
    accumulated = None
    for batch in microbatches:
        loss = model(batch).sum()
        loss.backward()
        accumulated = loss.detach() if accumulated is None else accumulated + loss.detach()
    assert accumulated is not None  # expect: RC108
    dist.all_reduce(accumulated)
    return accumulated
