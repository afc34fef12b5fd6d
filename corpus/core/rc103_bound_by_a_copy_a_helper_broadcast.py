"""A helper broadcasts a copy of the per-rank count (`_broadcast(n.clone())`), and the loop is
bounded by the original, which still holds each rank's own value: the ranks run different
numbers of rounds of the barrier inside.
"""
import torch
import torch.distributed as dist


def _broadcast(item):
    if item is not None:
        dist.broadcast(item, 0)


def schedule(loader, forward_step):
    batch = next(iter(loader))
    n = torch.tensor([len([sample for sample in batch if sample.sum() > 0])])
    _broadcast(n.clone())
    for i in range(int(n.item())):  # expect: RC103
        forward_step(i)
        dist.barrier()
