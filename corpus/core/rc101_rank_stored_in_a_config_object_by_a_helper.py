"""A launcher helper fills a config object in place: `setup_distributed(cfg)` stores the process
rank in `cfg.node_id` and whether this process leads in `cfg.leader`. The training script later
tests `cfg.leader` to write the checkpoint, and the save helper ends in a barrier that only the
leader reaches."""
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass
class RunConfig:
    out_dir: str = "ckpt"
    node_id: int = 0
    leader: bool = True
    world: int = 1


def setup_distributed(cfg: RunConfig) -> None:
    dist.init_process_group("gloo")
    cfg.node_id = int(os.environ["RANK"])
    cfg.world = dist.get_world_size()
    cfg.leader = cfg.node_id == 0


def save(model, cfg: RunConfig) -> None:
    torch.save(model.state_dict(), os.path.join(cfg.out_dir, "model.pt"))
    dist.barrier()


def main(model):
    cfg = RunConfig()
    setup_distributed(cfg)
    if cfg.leader:
        save(model, cfg)  # expect: RC101
