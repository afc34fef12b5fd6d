"""An early stop on this rank's own validation loss (AMD Primus#854's MLPerf target check, written
the Megatron way: batches come from `next(valid_iter)` of iterators the entry point is handed).
Near the target one rank returns from `train()` while the others go on to the next step's
all-reduce. The look-alike agrees on the loss first: safe_early_stop_on_the_agreed_loss.py."""
import torch
import torch.distributed as dist


def evaluate(model, valid_iter, eval_iters):
    total = 0.0
    for _ in range(eval_iters):
        batch = next(valid_iter)
        total += float(model(batch).mean())
    return total / eval_iters


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
            return step  # expect: RC102
