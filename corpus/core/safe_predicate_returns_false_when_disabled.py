"""The look-alike: the policy returns False at once when saving is switched off in the
configuration, the same on every rank, and the value it compares is agreed by an all-reduce, so
every rank enters the gathering save or none does."""
import torch
import torch.distributed as dist


class OutputsPolicy:
    def __init__(self, enabled: bool, maximise: bool):
        self.enabled = enabled
        self.maximise = maximise
        self.best = float("-inf") if maximise else float("inf")

    def should_save(self, value: float) -> bool:
        if not self.enabled:
            return False
        better = value > self.best if self.maximise else value < self.best
        if better:
            self.best = value
        return better


def save_outputs(preds: torch.Tensor, path: str) -> None:
    gathered = [torch.zeros_like(preds) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, preds)
    if dist.get_rank() == 0:
        torch.save(torch.cat(gathered), path)


def on_validation_end(policy: OutputsPolicy, preds: torch.Tensor, local_value: torch.Tensor, path: str) -> None:
    value = local_value.clone()
    dist.all_reduce(value)
    if policy.should_save(value.item() / dist.get_world_size()):
        save_outputs(preds, path)
