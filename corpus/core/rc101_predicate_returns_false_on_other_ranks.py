"""A policy object decides whether to save the epoch's outputs: it returns False at once on every
rank but global rank 0, and rank 0's own answer otherwise. The save it guards computes a metric
(an all-gather), so only rank 0 enters it (hi-ml#450's shape)."""
import torch
import torch.distributed as dist


class OutputsPolicy:
    def __init__(self, maximise: bool):
        self.maximise = maximise
        self.best = float("-inf") if maximise else float("inf")

    def should_save(self, value: float, is_global_rank_zero: bool) -> bool:
        if not is_global_rank_zero:
            return False
        better = value > self.best if self.maximise else value < self.best
        if better:
            self.best = value
        return better


def save_outputs(preds: torch.Tensor, path: str) -> None:
    gathered = [torch.zeros_like(preds) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, preds)
    torch.save(torch.cat(gathered), path)


def on_validation_end(policy: OutputsPolicy, preds: torch.Tensor, value: float, path: str) -> None:
    if policy.should_save(value, dist.get_rank() == 0):
        save_outputs(preds, path)  # expect: RC101
