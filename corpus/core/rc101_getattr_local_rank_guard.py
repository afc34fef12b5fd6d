"""A fine-tuning script that reads the launcher's rank defensively, `getattr(args, "local_rank",
-1)` (older argument parsers may lack the option), and runs the evaluation, which all-reduces the
accuracy, on the main process only. `getattr` with a constant name is the attribute read
`args.local_rank`: the guard is a rank test.
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
    local_rank = getattr(args, "local_rank", -1)
    if local_rank in (-1, 0):
        print("accuracy", evaluate(model, loader))  # expect: RC101
