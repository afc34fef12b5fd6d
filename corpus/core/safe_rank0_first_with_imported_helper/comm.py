"""wait_for_everyone(): a named barrier, used for the "rank 0 first" idiom."""
import torch.distributed as dist


def wait_for_everyone() -> None:
    dist.barrier()


def rank() -> int:
    return dist.get_rank()
