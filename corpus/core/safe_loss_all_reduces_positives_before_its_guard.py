"""The fixed detection loss (mmdetection#4923's shape): every rank all-reduces its count of
positive samples, then only the ranks with positives add their regression term. Called from the
training and the validation loop alike; nothing to report."""
import torch
import torch.distributed as dist


def reduce_mean(tensor):
    tensor = tensor.clone()
    dist.all_reduce(tensor)
    return tensor / dist.get_world_size()


def detection_loss(scores, targets):
    positives = (targets > 0).nonzero().reshape(-1)
    norm = max(reduce_mean(torch.tensor(float(len(positives)))), 1.0)
    loss = scores.sum() * 0.0
    if len(positives) > 0:
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
