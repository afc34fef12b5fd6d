"""Checkpoint helpers of an accelerate project: save_checkpoint calls Accelerator.save_state."""
import os

from accelerate import Accelerator


def save_checkpoint(accelerator: Accelerator, output_dir: str, step: int) -> str:
    path = os.path.join(output_dir, f"checkpoint-{step}")
    accelerator.save_state(path)
    return path


def prune_checkpoints(output_dir: str, keep: int) -> None:
    names = sorted(os.listdir(output_dir))
    for name in names[:-keep]:
        os.rename(os.path.join(output_dir, name), os.path.join(output_dir, "." + name))
