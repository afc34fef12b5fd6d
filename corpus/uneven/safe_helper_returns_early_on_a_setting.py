"""The same helper returning early on a setting of the run (every rank passes the same flag) or on
whether the batch has a field at all (the dataset's columns, alike on every rank): every rank
either syncs or skips."""
import torch
import torch.distributed as dist


def sync_token_accuracy(logits, labels, enabled: bool):
    if not enabled:
        return None
    correct = (logits.argmax(-1) == labels).float().sum().reshape(1)
    dist.all_reduce(correct)
    return correct


def sync_aux_loss(batch, aux):
    if "aux_labels" not in batch:
        return None
    value = aux.detach().reshape(1)
    dist.all_reduce(value)
    return value


def train(model, loader, optimizer, log_accuracy: bool):
    for batch in loader:
        out = model(batch["input_ids"])
        loss = torch.nn.functional.cross_entropy(out.logits.flatten(0, 1), batch["labels"].flatten())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        sync_token_accuracy(out.logits.detach(), batch["labels"], log_accuracy)
        sync_aux_loss(batch, out.aux_loss)
