"""The same broadcast of a permutation, drawn as long as a buffer made like the detections this
rank kept: how many there are is this rank's own, so the ranks broadcast tensors of different
lengths."""
import torch
import torch.distributed as dist


def shuffled_order(kept: torch.Tensor) -> torch.Tensor:
    rows = torch.zeros_like(kept).shape[0]
    order = torch.randperm(rows)
    dist.broadcast(order, src=0)  # expect: RC104
    return order


def evaluate(model, loader, threshold: float):
    for images, _ in loader:
        scores = model(images).sigmoid().max(dim=-1).values
        kept = torch.masked_select(scores, scores > threshold)
        shuffled_order(kept)
