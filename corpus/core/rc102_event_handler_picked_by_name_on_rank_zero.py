"""An event dispatcher picks the handler by name (`getattr(self, event)`), so what it runs is
whichever method of the object the event names: here a subclass's `batch_end`, which
all-reduces. A rank-zero-only base class returns before the dispatch on the other ranks, so rank
0 waits in that all-reduce alone (composer#239's RankZeroCallback and its SpeedMonitor)."""
import torch
import torch.distributed as dist


class Callback:
    def run_event(self, event, state):
        handler = getattr(self, event, None)
        if handler is not None:
            handler(state)


class RankZeroCallback(Callback):
    def run_event(self, event, state):
        if dist.get_rank() != 0:
            return  # expect: RC102
        handler = getattr(self, event, None)
        if handler is not None:
            handler(state)


class SpeedMonitor(RankZeroCallback):
    def batch_end(self, state):
        samples = torch.tensor([len(state.batch)])
        dist.all_reduce(samples)
        state.samples += int(samples.item())


def train(callbacks, state, batches):
    for batch in batches:
        state.batch = batch
        for callback in callbacks:
            callback.run_event("batch_end", state)
