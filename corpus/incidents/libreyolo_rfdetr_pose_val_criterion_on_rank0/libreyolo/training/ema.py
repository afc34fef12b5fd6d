"""Exponential moving average of the model weights (trimmed).

Part of the reconstruction of https://github.com/LibreYOLO/libreyolo/pull/349; see
libreyolo/training/trainer.py for the incident description.
"""
import copy
import math

import torch
import torch.nn as nn

from .distributed import unwrap_model


class ModelEMA:
    def __init__(self, model: nn.Module, decay: float = 0.9999, tau: int = 2000):
        self.ema = copy.deepcopy(unwrap_model(model)).eval()
        self.updates = 0
        self.decay_fn = lambda x: decay * (1 - math.exp(-x / tau))
        for p in self.ema.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def update(self, model: nn.Module) -> None:
        self.updates += 1
        d = self.decay_fn(self.updates)
        msd = unwrap_model(model).state_dict()
        for k, v in self.ema.state_dict().items():
            if v.dtype.is_floating_point:
                v *= d
                v += (1.0 - d) * msd[k].detach()
