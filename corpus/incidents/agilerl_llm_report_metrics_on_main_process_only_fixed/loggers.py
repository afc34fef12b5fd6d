"""Metric loggers of an AgileRL-style LLM fine-tuning (GRPO/CISPO) package. The W&B logger averages
each metric over all processes and fences the write with barriers, so every process must call it."""
from typing import Dict, Optional

import torch
from accelerate import Accelerator


class Logger:
    def __init__(self, accelerator: Optional[Accelerator] = None):
        self.accelerator = accelerator

    def _reduce(self, metrics: Dict[str, float]) -> Dict[str, float]:
        if self.accelerator is None:
            return metrics
        device = self.accelerator.device
        out = {}
        for key, value in metrics.items():
            t = torch.tensor([float(value)], device=device)
            out[key] = self.accelerator.gather_for_metrics(t).mean().item()
        return out

    def log(self, metrics: Dict[str, float], step: int) -> None:
        raise NotImplementedError


class WandbLogger(Logger):
    def __init__(self, accelerator: Optional[Accelerator] = None, project: str = "agilerl-llm"):
        super().__init__(accelerator)
        self.project = project
        self.run = None

    def log(self, metrics: Dict[str, float], step: int) -> None:
        reduced = self._reduce(metrics)
        if self.accelerator is not None:
            self.accelerator.wait_for_everyone()
        if self.accelerator is None or self.accelerator.is_main_process:
            import wandb

            if self.run is None:
                self.run = wandb.init(project=self.project)
            self.run.log(reduced, step=step)
        if self.accelerator is not None:
            self.accelerator.wait_for_everyone()


class StdOutLogger(Logger):
    def log(self, metrics: Dict[str, float], step: int) -> None:
        if self.accelerator is not None and not self.accelerator.is_main_process:
            return
        print(f"[step {step}] " + "  ".join(f"{k}={v:.4f}" for k, v in metrics.items()))
