"""The look-alike: only rank 0 builds the tensor, the others keep None, so only rank 0 passes the
helper's `if item is not None:` and broadcasts; the others never join it."""
import torch
import torch.distributed as dist


def broadcast_tensor(item, src_rank, group) -> None:
    if item is not None:
        dist.broadcast(item, src_rank, group=group)  # expect: RC101


def broadcast_scalars(values, group):
    info = None
    if group.rank() == 0:
        info = torch.tensor(values, dtype=torch.float32)
    broadcast_tensor(info, dist.get_process_group_ranks(group)[0], group)
