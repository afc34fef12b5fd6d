"""Trimmed colossalai/initialize.py: launch from torchrun env vars, then wrap model and optimizer
for naive fp16 and pipeline execution."""
import os

import torch
import torch.distributed as dist

from colossalai_lite.amp.naive_amp import NaiveAMPModel, NaiveAMPOptimizer
from colossalai_lite.amp.naive_amp._fp16_optimizer import DynamicGradScaler
from colossalai_lite.core import global_context as gpc
from colossalai_lite.engine import Engine, PipelineSchedule


class Config(dict):
    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError as err:
            raise AttributeError(name) from err


def launch_from_torch(config: dict, backend: str = "nccl", seed: int = 1024):
    dist.init_process_group(backend=backend)
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    torch.manual_seed(seed)
    gpc.init_parallel_groups(Config(config))


def initialize(model, optimizer, criterion, train_dataloader=None):
    cfg = gpc.config
    clip = cfg.get("clip_grad_norm", 0.0)
    fp16_cfg = cfg.get("fp16", None)
    if fp16_cfg is not None:
        model = NaiveAMPModel(model, output_to_fp32=True)
        optimizer = NaiveAMPOptimizer(
            optimizer,
            grad_scaler=DynamicGradScaler(initial_scale=fp16_cfg.get("initial_scale", 2 ** 16)),
            clip_grad_norm=clip,
        )
    schedule = PipelineSchedule(num_microbatches=cfg.get("num_microbatches", 4))
    engine = Engine(model, optimizer, criterion, schedule)
    return engine, train_dataloader
