"""A `prepare` that wraps what it is given (the scheduler in a wrapper that keeps this rank's own
step log) and then picks the model out of the prepared objects with `isinstance(obj, nn.Module)`,
as accelerate's `Accelerator.prepare` does before it loads the full state dict into the FSDP2
model. The scheduler wrapper is a plain class: no instance of it passes the test, so the
`state_dict()` whose keys are broadcast one by one is the model's, alike on every rank.
"""
import torch
import torch.distributed as dist


class WarmupScheduler:
    def __init__(self, scheduler):
        self.scheduler = scheduler
        self.local_steps = list(range(dist.get_rank()))

    def state_dict(self):
        return {f"step_{i}": s for i, s in enumerate(self.local_steps)}


class Launcher:
    def _prepare_one(self, obj):
        if isinstance(obj, torch.optim.lr_scheduler.LRScheduler):
            return WarmupScheduler(obj)
        return obj

    def prepare(self, *objects):
        prepared = [self._prepare_one(o) if not isinstance(o, torch.nn.Module) else o for o in objects]
        model = None
        for i, obj in enumerate(prepared):
            if isinstance(obj, torch.nn.Module):
                model = obj
        if model is not None:
            self.load_full_state(model)
        return prepared

    def load_full_state(self, model):
        for name, tensor in model.state_dict().items():
            dist.broadcast(tensor, src=0)
