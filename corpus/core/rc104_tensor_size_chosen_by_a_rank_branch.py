"""The hang tutorials' second example: both ranks call all_reduce, but rank 1 passes
`torch.ones(2)` where rank 0 passes `torch.ones(1)`. Written as an if/else, as a conditional
expression, or with a display of another length per rank, the tensor's size is chosen by the
rank, and the all_reduce mismatches (so does a list of another length per rank given to
`torch.tensor`).
"""
import torch
import torch.distributed as dist


def if_else(rank: int):
    if rank == 1:
        t = torch.ones(2)
    else:
        t = torch.ones(1)
    dist.all_reduce(t)  # expect: RC104


def conditional(rank: int):
    t = torch.ones(2) if rank == 1 else torch.ones(1)
    dist.all_reduce(t)  # expect: RC104


def display(loss: float):
    if dist.get_rank() == 0:
        stats = torch.tensor([loss, 1.0])
    else:
        stats = torch.tensor([loss])
    dist.all_reduce(stats)  # expect: RC104


def counts_from_a_list(rank: int, tokens: int, pads: int):
    if rank == 0:
        counts = [tokens, pads, 1]
    else:
        counts = [tokens, pads]
    dist.all_reduce(torch.tensor(counts))  # expect: RC104
