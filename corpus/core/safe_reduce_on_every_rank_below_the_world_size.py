"""A guard written as `rank < world_size` (MPI's `if (rank < nprocs)`) holds on every rank of the
job: every global rank is below the world size, so all of them reduce."""
import torch
import torch.distributed as dist


def sync_loss(loss: torch.Tensor) -> torch.Tensor:
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    if rank < world_size:
        dist.all_reduce(loss)
    return loss
