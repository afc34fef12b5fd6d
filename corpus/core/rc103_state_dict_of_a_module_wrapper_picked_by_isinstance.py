"""The look-alike of safe_state_dict_of_the_module_picked_by_isinstance_from_prepared_objects.py
where the wrapper `prepare` builds is itself an `nn.Module` (a module that keeps this rank's own
step log as its state): it passes `isinstance(obj, nn.Module)`, so the model picked may be it, and
its `state_dict()` has as many keys as this rank's number; the ranks with fewer keys stop
broadcasting while the others wait.
"""
import torch
import torch.distributed as dist


class WarmupScheduler(torch.nn.Module):
    def __init__(self, scheduler):
        super().__init__()
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
        prepared = [self._prepare_one(o) for o in objects]
        model = None
        for i, obj in enumerate(prepared):
            if isinstance(obj, torch.nn.Module):
                model = obj
        if model is not None:
            self.load_full_state(model)
        return prepared

    def load_full_state(self, model):
        for name, tensor in model.state_dict().items():  # expect: RC103
            dist.broadcast(tensor, src=0)
