"""A training loop evaluates every `eval_interval` steps and stops once the validation loss
reaches a target. The loss is this rank's own (its validation batches, never all-reduced), so one
rank returns while the others go on into the next step's gradient all-reduce."""
import torch
import torch.distributed as dist


def evaluate(model, valid_loader) -> float:
    total, count = 0.0, 0
    with torch.no_grad():
        for batch in valid_loader:
            total += float(model(batch).mean())
            count += 1
    return total / max(count, 1)


def train(model, optimizer, train_loader, valid_loader, eval_interval: int, target: float):
    step = 0
    for batch in train_loader:
        loss = model(batch).mean()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        optimizer.step()
        step += 1
        if eval_interval and step % eval_interval == 0:
            val_loss = evaluate(model, valid_loader)
            if val_loss <= target:
                return step  # expect: RC102
    return step
