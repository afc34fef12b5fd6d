"""The look-alike: the same annotated helpers, each call every process must make made by every
process, the main process's own work (printing, writing a file) kept under its test. An
annotation that names no framework type (`int`, a union of two classes) types nothing."""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Union

from accelerate import Accelerator
from torch.nn.parallel import DistributedDataParallel

if TYPE_CHECKING:
    import lightning.pytorch as pl


def save_on_every_process(accelerator: Accelerator, output_dir: str) -> None:
    accelerator.save_state(output_dir)
    if accelerator.is_main_process:
        print(f"saved to {output_dir}")


def probe_everywhere(model: Optional[DistributedDataParallel], batch, rank: int):
    out = model(batch)
    if rank == 0:
        print(out.shape)
    return out


def checkpoint_from_callback(trainer: "pl.Trainer", path: str) -> None:
    trainer.save_checkpoint(path)
    if trainer.is_global_zero:
        print(path)


def either(model: Union[DistributedDataParallel, Accelerator], rank: int, steps: int) -> None:
    if rank == 0:
        print(model, steps)
