"""Megatron-style sequence-parallel scatter: the activations are split along the last dimension
into pieces of `hidden // world_size` (`torch.split`, the size divides by construction), each
rank keeps the piece its rank picks and all-gathers the pieces back later. Every piece but a
remainder has the size given, so every rank's piece has one shape."""
import torch
import torch.distributed as dist


def scatter_to_ranks(hidden_states):
    world_size = dist.get_world_size()
    last = hidden_states.dim() - 1
    pieces = torch.split(hidden_states, hidden_states.size(last) // world_size, dim=last)
    return pieces[dist.get_rank()].contiguous()


def gather_from_ranks(piece):
    world_size = dist.get_world_size()
    parts = [torch.empty_like(piece) for _ in range(world_size)]
    dist.all_gather(parts, piece)
    return torch.cat(parts, dim=-1)


def layer(hidden_states, weight):
    piece = scatter_to_ranks(hidden_states)
    return gather_from_ranks(piece @ weight)
