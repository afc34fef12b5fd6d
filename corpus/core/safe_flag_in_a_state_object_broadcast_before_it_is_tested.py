"""A run-control object passed to a helper: rank 0 sets `state.stop` from its own check, the
helper broadcasts that attribute from rank 0, and every rank then tests the same value."""
import torch
import torch.distributed as dist


class RunState:
    def __init__(self):
        self.stop = torch.zeros(1)
        self.step = 0


def sync_stop(state: RunState, loss: float, limit: float) -> None:
    if dist.get_rank() == 0 and loss > limit:
        state.stop = torch.ones(1)
    dist.broadcast(state.stop, 0)
    if state.stop.item() > 0:
        dist.barrier()
