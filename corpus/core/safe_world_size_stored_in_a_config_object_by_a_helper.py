"""The look-alike of rc101_rank_stored_in_a_config_object_by_a_helper.py: the helper stores the
world size in the config object, and the script tests it before a barrier. The world size is the
same on every rank, so every rank takes the same arm."""
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass
class RunConfig:
    out_dir: str = "ckpt"
    world: int = 1


def setup_distributed(cfg: RunConfig) -> None:
    dist.init_process_group("gloo")
    cfg.world = dist.get_world_size()


def save(model, cfg: RunConfig) -> None:
    torch.save(model.state_dict(), os.path.join(cfg.out_dir, "model.pt"))
    dist.barrier()


def main(model):
    cfg = RunConfig()
    setup_distributed(cfg)
    if cfg.world > 1:
        save(model, cfg)
