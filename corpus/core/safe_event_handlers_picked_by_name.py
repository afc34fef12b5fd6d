"""Look-alikes of an event handler picked by name: the dispatcher runs the handler on every rank
(the communicating handler belongs to a plain callback), and a rank-zero-only dispatcher whose
handlers only log (no method of the object or its subclasses communicates)."""
import torch
import torch.distributed as dist


class Callback:
    def run_event(self, event, state):
        handler = getattr(self, event, None)
        if handler is not None:
            handler(state)


class SpeedMonitor(Callback):
    def batch_end(self, state):
        samples = torch.tensor([len(state.batch)])
        dist.all_reduce(samples)
        state.samples += int(samples.item())


class LoggingCallback:
    def run_event(self, event, state):
        if dist.get_rank() != 0:
            return
        handler = getattr(self, event, None)
        if handler is not None:
            handler(state)


class PrintLoss(LoggingCallback):
    def batch_end(self, state):
        print(state.loss)

    def epoch_end(self, state):
        print(state.epoch)


def train(callbacks, state, batches):
    for batch in batches:
        state.batch = batch
        for callback in callbacks:
            callback.run_event("batch_end", state)
