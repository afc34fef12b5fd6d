"""A helper returns (world size, rank), or the constants (1, 0) outside a distributed run
(torchtune's get_world_size_and_rank). Unpacked item by item, the world size is alike on every
rank: the barrier under `world_size > 1` is safe; the one under `rank == 0` is not."""
import torch.distributed as dist


def get_world_size_and_rank():
    if dist.is_available() and dist.is_initialized():
        return dist.get_world_size(), dist.get_rank()
    return 1, 0


def finish_profiling():
    world_size, rank = get_world_size_and_rank()
    if world_size > 1:
        dist.barrier()
    if rank == 0:
        dist.barrier()  # expect: RC101
