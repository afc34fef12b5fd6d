"""Look-alikes of a helper's raise caught by the training loop: the helper raises on the
configuration (alike on every rank, so every rank skips together), the loop agrees on skipping
with an all_reduce of a flag before it acts (NeMo Automodel's fix), and a handler that re-raises."""
import torch
import torch.distributed as dist


class BadConfig(ValueError):
    pass


class NoValidAnchorsError(RuntimeError):
    pass


def check_config(block_size):
    if block_size <= 0:
        raise BadConfig("block_size must be positive")


def select_anchors(loss_mask, block_size):
    valid = loss_mask.sum(-1) >= block_size
    if not valid.any():
        raise NoValidAnchorsError(f"no sample of length >= {block_size}")
    return valid


def train(model, train_loader, block_size):
    for batch in train_loader:
        try:
            check_config(block_size)
        except BadConfig:
            continue
        loss = model(batch["input_ids"]).sum()
        dist.all_reduce(loss)


def train_agreeing(model, train_loader, block_size):
    for batch in train_loader:
        valid = batch["loss_mask"].sum(-1) >= block_size
        flag = torch.tensor([int(valid.any())])
        dist.all_reduce(flag, op=dist.ReduceOp.MIN)
        if flag.item() == 0:
            continue
        loss = model(batch["input_ids"][valid]).sum()
        dist.all_reduce(loss)


def train_loud(model, train_loader, block_size):
    for batch in train_loader:
        try:
            anchors = select_anchors(batch["loss_mask"], block_size)
        except NoValidAnchorsError as err:
            raise RuntimeError("empty batch") from err
        loss = model(batch["input_ids"][anchors]).sum()
        dist.all_reduce(loss)
