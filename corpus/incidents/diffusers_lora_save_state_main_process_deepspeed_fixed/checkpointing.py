"""Checkpoint helpers of a diffusers-style LoRA fine-tuning script: rotate old checkpoints and
write the accelerate state (model, optimizer, scheduler, RNG) with `Accelerator.save_state`."""
import logging
import os
import shutil

from accelerate import Accelerator

logger = logging.getLogger(__name__)


def prune_checkpoints(output_dir, total_limit):
    if total_limit is None:
        return
    ckpts = sorted((d for d in os.listdir(output_dir) if d.startswith("checkpoint")),
                   key=lambda d: int(d.split("-")[1]))
    if len(ckpts) >= total_limit:
        for stale in ckpts[: len(ckpts) - total_limit + 1]:
            logger.info("removing checkpoint %s", stale)
            shutil.rmtree(os.path.join(output_dir, stale))


def save_training_state(accelerator: Accelerator, output_dir, global_step, total_limit=None):
    """Write checkpoint-<step>. Under DeepSpeed, save_state calls the engine's save_checkpoint,
    which every rank has to enter (it synchronises the ZeRO partitions and ends in a barrier)."""
    if accelerator.is_main_process:
        prune_checkpoints(output_dir, total_limit)
    save_path = os.path.join(output_dir, f"checkpoint-{global_step}")
    accelerator.save_state(save_path)
    logger.info("Saved state to %s", save_path)
    return save_path
