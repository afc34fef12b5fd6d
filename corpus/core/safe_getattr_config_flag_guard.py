"""Look-alike of rc101_getattr_local_rank_guard: the evaluation that all-reduces runs under
`getattr(args, "do_eval", False)`, a configuration flag read defensively, alike on every rank;
only the printing is left to the main process.
"""
import torch
import torch.distributed as dist


def evaluate(model, loader):
    correct = torch.zeros(1)
    for x, y in loader:
        correct += (model(x).argmax(-1) == y).sum()
    dist.all_reduce(correct)
    return correct.item()


def train(args, model, loader, optimizer):
    for x, y in loader:
        loss = model(x, y)
        loss.backward()
        optimizer.step()
    if getattr(args, "do_eval", False):
        accuracy = evaluate(model, loader)
        if getattr(args, "local_rank", -1) in (-1, 0):
            print("accuracy", accuracy)
