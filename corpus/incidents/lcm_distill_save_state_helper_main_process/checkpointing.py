"""Checkpoint helpers for the LCM distillation script: rotate old checkpoints and save the full
accelerate state (UNet, optimizer, scheduler, EMA target) into `output_dir/checkpoint-<step>`."""
import logging
import os
import shutil

logger = logging.getLogger(__name__)


def rotate_checkpoints(output_dir, total_limit):
    if total_limit is None:
        return
    checkpoints = sorted(
        (d for d in os.listdir(output_dir) if d.startswith("checkpoint")),
        key=lambda d: int(d.split("-")[1]),
    )
    if len(checkpoints) >= total_limit:
        for stale in checkpoints[: len(checkpoints) - total_limit + 1]:
            logger.info(f"removing {stale}")
            shutil.rmtree(os.path.join(output_dir, stale))


def save_training_checkpoint(accelerator, output_dir, global_step, total_limit):
    rotate_checkpoints(output_dir, total_limit)
    save_path = os.path.join(output_dir, f"checkpoint-{global_step}")
    accelerator.save_state(save_path)
    logger.info(f"Saved state to {save_path}")
