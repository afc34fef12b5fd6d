"""Detection evaluation: the scores of the boxes this rank's model kept are gathered after an
empty result is replaced by a one-element placeholder. The placeholder only hides the empty case:
a rank that kept seven boxes gathers seven scores while another gathers one."""
import torch
from accelerate import Accelerator


def evaluate(accelerator: Accelerator, model, loader):
    model.eval()
    kept = []
    for batch in loader:
        with torch.no_grad():
            scores = model(batch["pixel_values"])["scores"]
        if scores.numel() == 0:
            scores = torch.zeros(1, device=accelerator.device)
        kept.append(accelerator.gather(scores))  # expect: RC104
    return torch.cat(kept).mean()
