"""A detection loss normalises by the number of positive samples, averaged over ranks, but only
when this rank's batch has any: a rank whose images hold no positives skips the all-reduce. Both
the training loop and the validation loop call the loss; the hazard is one guard in one function,
reported once, at the all-reduce it guards (where the fix goes), not at each loop."""
import torch
import torch.distributed as dist


def reduce_mean(tensor):
    tensor = tensor.clone()
    dist.all_reduce(tensor)
    return tensor / dist.get_world_size()


def detection_loss(scores, targets):
    positives = (targets > 0).nonzero().reshape(-1)
    loss = scores.sum() * 0.0
    if len(positives) > 0:
        norm = max(reduce_mean(torch.tensor(float(len(positives)))), 1.0)  # expect: RC101
        loss = (scores[positives] - targets[positives]).abs().sum() / norm
    return loss


def train(model, loader, optimizer):
    for images, targets in loader:
        loss = detection_loss(model(images), targets)
        loss.backward()
        optimizer.step()


def validate(model, loader):
    total = 0.0
    with torch.no_grad():
        for images, targets in loader:
            total += detection_loss(model(images), targets).item()
    return total
