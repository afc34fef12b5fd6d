"""The unwrap tests for the wrong wrapper (FSDP), so a DDP model comes back as it is, and rank 0's
evaluation forward through it broadcasts buffers the other ranks never receive."""
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.nn.parallel import DistributedDataParallel as DDP


def wrap(model: torch.nn.Module, distributed: bool) -> torch.nn.Module:
    if distributed:
        model = DDP(model)
    return model


def unwrap(model: torch.nn.Module) -> torch.nn.Module:
    return model.module if isinstance(model, FSDP) else model


def train(local: torch.nn.Module, distributed: bool, steps: int) -> None:
    model = wrap(local, distributed)
    for step in range(steps):
        model(torch.randn(4, 8)).sum().backward()
        if dist.get_rank() == 0 and step % 100 == 0:
            print(unwrap(model)(torch.randn(1, 8)))  # expect: RC101
