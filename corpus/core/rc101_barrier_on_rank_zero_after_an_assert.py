"""The look-alike's `assert` on this rank's own state, followed by a barrier only rank 0 issues:
the ranks that pass the assert still diverge, rank 0 in the barrier and the others past it."""
import torch.distributed as dist


def save(state: dict, batch):
    rank = dist.get_rank()
    assert batch.numel() > 0, "an empty batch on this rank"
    if rank == 0:
        dist.barrier()  # expect: RC101
    dist.all_reduce(state["loss"])
