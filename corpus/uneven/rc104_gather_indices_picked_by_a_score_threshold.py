"""Evaluation gathers the indices of the candidates this rank's model scored above a threshold:
`torch.nonzero` keeps as many as the scores pick, so each rank hands the all-gather a tensor of
its own length (accelerate's `gather` needs one shape everywhere; `pad_across_processes` first)."""
import torch
from accelerate import Accelerator


def evaluate(accelerator: Accelerator, model, loader, threshold: float):
    picked = []
    for batch in loader:
        with torch.no_grad():
            scores = model(batch["pixel_values"]).sigmoid()
        keep = torch.nonzero(scores.max(dim=-1).values > threshold).squeeze(-1)
        picked.append(accelerator.gather(keep))  # expect: RC104
    return torch.cat(picked)
