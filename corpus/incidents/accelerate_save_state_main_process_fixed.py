"""Safe twin of accelerate_save_state_main_process.py: `accelerator.save_state` runs on every
process (DeepSpeed's save_checkpoint synchronizes all ranks); only pruning and logging stay under
`is_main_process`.

Thread: https://github.com/huggingface/accelerate/issues/1171
"""
import argparse
import logging
import math
import os
import shutil

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import ProjectConfiguration
from torch.utils.data import DataLoader

logger = logging.getLogger(__name__)


def parse_args():
    parser = argparse.ArgumentParser(description="LoRA fine-tuning of a denoising UNet")
    parser.add_argument("--output_dir", type=str, default="sd-lora")
    parser.add_argument("--train_batch_size", type=int, default=4)
    parser.add_argument("--max_train_steps", type=int, default=15000)
    parser.add_argument("--checkpointing_steps", type=int, default=500)
    parser.add_argument("--checkpoints_total_limit", type=int, default=3)
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    return parser.parse_args()


def prune_checkpoints(output_dir, limit):
    checkpoints = sorted(
        (d for d in os.listdir(output_dir) if d.startswith("checkpoint")),
        key=lambda d: int(d.split("-")[1]),
    )
    for name in checkpoints[: max(0, len(checkpoints) - limit + 1)]:
        shutil.rmtree(os.path.join(output_dir, name))


def main(unet, noise_scheduler, train_dataset):
    args = parse_args()
    accelerator = Accelerator(
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        project_config=ProjectConfiguration(project_dir=args.output_dir),
    )
    lora_params = [p for n, p in unet.named_parameters() if "lora" in n]
    optimizer = torch.optim.AdamW(lora_params, lr=args.learning_rate)
    train_dataloader = DataLoader(train_dataset, batch_size=args.train_batch_size, shuffle=True)
    unet, optimizer, train_dataloader = accelerator.prepare(unet, optimizer, train_dataloader)

    num_epochs = math.ceil(args.max_train_steps / len(train_dataloader))
    global_step = 0
    for epoch in range(num_epochs):
        unet.train()
        for batch in train_dataloader:
            with accelerator.accumulate(unet):
                latents = batch["latents"]
                noise = torch.randn_like(latents)
                timesteps = torch.randint(0, noise_scheduler.config.num_train_timesteps, (latents.shape[0],), device=latents.device)
                noisy = noise_scheduler.add_noise(latents, noise, timesteps)
                pred = unet(noisy, timesteps, batch["encoder_hidden_states"]).sample
                loss = F.mse_loss(pred.float(), noise.float())
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()

            if accelerator.sync_gradients:
                global_step += 1
                if global_step % args.checkpointing_steps == 0:
                    if accelerator.is_main_process:
                        prune_checkpoints(args.output_dir, args.checkpoints_total_limit)
                    accelerator.wait_for_everyone()
                    save_path = os.path.join(args.output_dir, f"checkpoint-{global_step}")
                    accelerator.save_state(save_path)
                    if accelerator.is_main_process:
                        logger.info(f"Saved state to {save_path}")
            if global_step >= args.max_train_steps:
                break

    accelerator.wait_for_everyone()
    accelerator.end_training()
