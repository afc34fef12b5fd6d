"""Look-alike of an early stop on the validation loss: the loss of `next(valid_iter)` batches is
all-reduced before the test (the Primus#854 fix), so every rank stops at the same step."""
import torch
import torch.distributed as dist


def evaluate(model, valid_iter, eval_iters):
    total = torch.zeros(1)
    for _ in range(eval_iters):
        batch = next(valid_iter)
        total += model(batch).mean().detach()
    dist.all_reduce(total)
    return total.item() / (eval_iters * dist.get_world_size())


def train(model, optimizer, train_iter, valid_iter, target, eval_iters=10):
    step = 0
    while True:
        batch = next(train_iter)
        loss = model(batch).mean()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        optimizer.step()
        step += 1
        if evaluate(model, valid_iter, eval_iters) <= target:
            return step
