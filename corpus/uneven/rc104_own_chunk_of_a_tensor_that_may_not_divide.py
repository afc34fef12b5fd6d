"""The look-alike with `chunk`: `x.chunk(world_size)` makes pieces of ceil(size / world_size), so
when the size does not divide, the last rank's piece is shorter (or missing), and the all-gather
of each rank's own piece into buffers shaped like the local piece mismatches on that rank."""
import torch
import torch.distributed as dist


def scatter_to_ranks(hidden_states):
    pieces = hidden_states.chunk(dist.get_world_size(), dim=-1)
    return pieces[dist.get_rank()].contiguous()


def gather_from_ranks(piece):
    parts = [torch.empty_like(piece) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, piece)  # expect: RC104
    return torch.cat(parts, dim=-1)


def layer(hidden_states, weight):
    return gather_from_ranks(scatter_to_ranks(hidden_states) @ weight)
