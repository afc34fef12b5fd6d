"""Distributed context shared by all training stages (pretrain, SFT, reward, DPO)."""
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


@dataclass
class DistContext:
    rank: int
    local_rank: int
    world_size: int
    device: torch.device

    @property
    def is_distributed(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def setup() -> DistContext:
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size > 1:
        dist.init_process_group("nccl")
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    return DistContext(rank, local_rank, world_size, torch.device("cuda", local_rank))


def ddp_wrap(model, ctx: DistContext):
    if ctx.is_distributed:
        model = DDP(model, device_ids=[ctx.local_rank])
    return model


def unwrap(model):
    return model.module if isinstance(model, DDP) else model


def cleanup(ctx: DistContext) -> None:
    if ctx.is_distributed:
        dist.destroy_process_group()
