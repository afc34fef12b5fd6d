"""A helper checks this rank's batch and raises when it holds nothing usable (NeMo Automodel's
DFlash trainer raised NoValidAnchorsError when every sample was shorter than a block); the
training loop catches it and skips the batch with `continue`, before the gradient all-reduce the
other ranks enter. The raise is in another function (in `evaluate`, two calls down): the `except` is where the
ranks part.
The look-alikes are in safe_helper_raises_on_configuration.py."""
import torch
import torch.distributed as dist


class NoValidAnchorsError(RuntimeError):
    pass


def select_anchors(loss_mask, block_size):
    valid = loss_mask.sum(-1) >= block_size
    if not valid.any():
        raise NoValidAnchorsError(f"no sample of length >= {block_size}")
    return valid


def train(model, train_loader, block_size):
    for batch in train_loader:
        try:
            anchors = select_anchors(batch["loss_mask"], block_size)
        except NoValidAnchorsError:
            continue  # expect: RC103
        loss = model(batch["input_ids"][anchors]).sum()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)


def prepare(batch, block_size):
    anchors = select_anchors(batch["loss_mask"], block_size)
    return batch["input_ids"][anchors]


def evaluate(model, batch, block_size):
    try:
        inputs = prepare(batch, block_size)
    except NoValidAnchorsError:
        return None  # expect: RC102
    total = model(inputs).sum()
    dist.all_reduce(total)
    return total
