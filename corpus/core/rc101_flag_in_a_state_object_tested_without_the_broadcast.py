"""The look-alike of safe_flag_in_a_state_object_broadcast_before_it_is_tested.py: the broadcast is of
the step counter, not of the flag rank 0 set, so only rank 0 sees `state.stop` set."""
import torch
import torch.distributed as dist


class RunState:
    def __init__(self):
        self.stop = torch.zeros(1)
        self.step = torch.zeros(1)


def sync_stop(state: RunState, loss: float, limit: float) -> None:
    if dist.get_rank() == 0 and loss > limit:
        state.stop = torch.ones(1)
    dist.broadcast(state.step, 0)
    if state.stop.item() > 0:
        dist.barrier()  # expect: RC101
