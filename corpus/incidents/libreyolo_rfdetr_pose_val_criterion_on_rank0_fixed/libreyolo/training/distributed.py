"""Distributed training utilities for LibreYOLO (trimmed).

Thin helpers around ``torch.distributed`` so the rest of the trainer can stay backend-agnostic. All
helpers degrade to no-ops when distributed is not initialised.

Part of the reconstruction of https://github.com/LibreYOLO/libreyolo/pull/349; see
libreyolo/training/trainer.py for the incident description.
"""
from __future__ import annotations

import os
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn


def is_distributed() -> bool:
    """True iff a process group is initialised."""
    return dist.is_available() and dist.is_initialized()


def get_rank() -> int:
    """Global rank of this process, or 0 outside DDP."""
    return dist.get_rank() if is_distributed() else 0


def get_local_rank() -> int:
    """Local rank from ``LOCAL_RANK`` env (set by torchrun), or 0."""
    return int(os.environ.get("LOCAL_RANK", 0))


def get_world_size() -> int:
    """Number of processes participating, or 1 outside DDP."""
    return dist.get_world_size() if is_distributed() else 1


def is_main_process() -> bool:
    """True on rank 0 (always True outside DDP)."""
    return get_rank() == 0


def has_torchrun_env() -> bool:
    """True iff this process was spawned by torchrun (LOCAL_RANK is set)."""
    return "LOCAL_RANK" in os.environ


def barrier() -> None:
    """Synchronisation barrier; no-op outside DDP."""
    if is_distributed():
        dist.barrier()


def init_distributed(timeout_minutes: int = 30) -> None:
    backend = "nccl" if torch.cuda.is_available() and dist.is_nccl_available() else "gloo"
    if backend == "nccl":
        torch.cuda.set_device(get_local_rank())
    dist.init_process_group(backend=backend, timeout=timedelta(minutes=timeout_minutes))


def unwrap_model(model: nn.Module) -> nn.Module:
    """Strip DDP / DataParallel wrappers from a module (idempotent)."""
    parallel_types = (nn.parallel.DataParallel, nn.parallel.DistributedDataParallel)
    while isinstance(model, parallel_types):
        model = model.module
    return model


def scale_loss_for_ddp(loss: torch.Tensor) -> torch.Tensor:
    """Multiply loss by world_size so DDP gradient averaging composes like single-GPU sums."""
    return loss * get_world_size() if is_distributed() else loss
