"""Look-alike of safe_reduce_on_every_rank_below_the_world_size: `rank < world_size - 1` leaves
the last rank out, and the others wait for it in the all-reduce."""
import torch
import torch.distributed as dist


def sync_loss(loss: torch.Tensor) -> torch.Tensor:
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    if rank < world_size - 1:
        dist.all_reduce(loss)  # expect: RC101
    return loss
