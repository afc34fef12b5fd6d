"""The look-alike of rc102_early_stop_on_local_eval_loss_under_eval_interval.py: the validation
loss is all-reduced before the test, so every rank sees the same value and all stop together."""
import torch
import torch.distributed as dist


def evaluate(model, valid_loader) -> float:
    stats = torch.zeros(2)
    with torch.no_grad():
        for batch in valid_loader:
            stats += torch.stack([model(batch).mean(), torch.ones(())])
    dist.all_reduce(stats)
    return (stats[0] / stats[1].clamp(min=1)).item()


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
                return step
    return step
