"""Helpers that receive the framework objects as annotated parameters, the way typed training code
passes them around: nothing in this module constructs them, so only the annotations say what they
are. Each helper lets the main process alone into a call every process must make."""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from accelerate import Accelerator
from torch.nn.parallel import DistributedDataParallel

if TYPE_CHECKING:
    import lightning.pytorch as pl


def save_if_main(accelerator: Accelerator, output_dir: str) -> None:
    if accelerator.is_main_process:
        accelerator.save_state(output_dir)  # expect: RC101


def probe_on_rank_zero(model: Optional[DistributedDataParallel], batch, rank: int):
    if rank == 0:
        return model(batch)  # expect: RC101
    return None


def checkpoint_from_callback(trainer: "pl.Trainer", path: str) -> None:
    if trainer.is_global_zero:
        trainer.save_checkpoint(path)  # expect: RC101


def wait_on_main(accelerator: Accelerator | None) -> None:
    if accelerator.is_local_main_process:
        accelerator.wait_for_everyone()  # expect: RC101
