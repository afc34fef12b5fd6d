"""Rank 0 fills the tensor with the values, the other ranks with zeros to receive into: it is a
tensor on every rank, so the helper's `if item is not None:` is true everywhere and every rank
broadcasts (Megatron-LM's data_schedule_utils.broadcast_scalars has this shape)."""
import torch
import torch.distributed as dist


def broadcast_tensor(item, src_rank, group) -> None:
    if item is not None:
        dist.broadcast(item, src_rank, group=group)


def broadcast_scalars(values, group):
    if group.rank() == 0:
        info = torch.tensor(values, dtype=torch.float32)
    else:
        info = torch.zeros(len(values), dtype=torch.float32)
    broadcast_tensor(info, dist.get_process_group_ranks(group)[0], group)
    return info.tolist()
