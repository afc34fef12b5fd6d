"""Look-alike of rc104_tensor_size_chosen_by_a_rank_branch: the arms of the rank branch build
their tensors with other values but one size (`torch.ones(2)` / `torch.zeros(2)`, a two-item
display on each rank, Megatron's `torch.tensor([1])` on the reading rank and `torch.empty(1)` on
the others before the broadcast), so the collectives match.
"""
import torch
import torch.distributed as dist


def if_else(rank: int):
    if rank == 1:
        t = torch.ones(2)
    else:
        t = torch.zeros(2)
    dist.all_reduce(t)


def conditional(rank: int):
    t = torch.ones(2) if rank == 1 else torch.zeros(2)
    dist.all_reduce(t)


def display(loss: float):
    if dist.get_rank() == 0:
        stats = torch.tensor([loss, 1.0])
    else:
        stats = torch.tensor([0.0, 0.0])
    dist.all_reduce(stats)


def has_data(data_iterator):
    if dist.get_rank() == 0:
        flag = torch.tensor([1], dtype=torch.uint8)
    else:
        flag = torch.empty(1, dtype=torch.uint8)
    dist.broadcast(flag, 0)
    return flag.item() == 1


def counts_from_a_list(rank: int, tokens: int, pads: int):
    if rank == 0:
        counts = [tokens, pads]
    else:
        counts = [0, 0]
    dist.all_reduce(torch.tensor(counts))
