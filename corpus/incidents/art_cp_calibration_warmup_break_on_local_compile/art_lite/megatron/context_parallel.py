"""Trimmed context-parallel helpers: the sequence of a packed prefix-tree layout is split over the
CP ranks, and the recurrent (gated delta net) layers exchange their chunk states with an
all-to-all whose split sizes come from the layout's plan."""
import torch
import torch.distributed as dist


def plan_state_exchange(layout, cp_rank: int, cp_size: int):
    """Rows this rank sends to / receives from every other CP rank for `layout`."""
    send = [0] * cp_size
    recv = [0] * cp_size
    for seg in layout.segments:
        owner = seg.owner_rank(cp_size)
        for reader in seg.reader_ranks(cp_size):
            if owner == cp_rank and reader != cp_rank:
                send[reader] += seg.state_rows
            if reader == cp_rank and owner != cp_rank:
                recv[owner] += seg.state_rows
    return send, recv


def exchange_chunk_states(local_states: torch.Tensor, layout, cp_group) -> torch.Tensor:
    cp_rank = dist.get_rank(cp_group)
    cp_size = dist.get_world_size(cp_group)
    send, recv = plan_state_exchange(layout, cp_rank, cp_size)
    out = local_states.new_empty((sum(recv),) + tuple(local_states.shape[1:]))
    dist.all_to_all_single(out, local_states[: sum(send)].contiguous(),
                           output_split_sizes=recv, input_split_sizes=send, group=cp_group)
    return out
