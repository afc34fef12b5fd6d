"""Safe twin of simpletuner_sdxl_save_state_main_process_deepspeed: every process calls
`accelerator.save_state`; only checkpoint rotation and logging stay on the main process.

Thread: https://github.com/bghira/SimpleTuner/issues/262 ("Saving checkpoint hangs when using DeepSpeed")
Project: bghira/SimpleTuner
"""
import argparse
import os
import shutil

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.logging import get_logger

logger = get_logger(__name__)


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--output_dir", default="sdxl-out")
    p.add_argument("--max_train_steps", type=int, default=30000)
    p.add_argument("--checkpointing_steps", type=int, default=500)
    p.add_argument("--checkpoints_total_limit", type=int, default=4)
    p.add_argument("--learning_rate", type=float, default=4e-7)
    p.add_argument("--gradient_accumulation_steps", type=int, default=4)
    p.add_argument("--use_deepspeed_optimizer", action="store_true")
    return p.parse_args()


def rotate(output_dir, limit):
    ckpts = sorted((d for d in os.listdir(output_dir) if d.startswith("checkpoint")),
                   key=lambda x: int(x.split("-")[1]))
    for old in ckpts[: max(0, len(ckpts) - limit + 1)]:
        shutil.rmtree(os.path.join(output_dir, old))


def main(unet, noise_scheduler, train_dataloader, compute_embeddings):
    args = parse_args()
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps,
                              log_with="wandb")
    optimizer = torch.optim.AdamW(unet.parameters(), lr=args.learning_rate)
    unet, optimizer, train_dataloader = accelerator.prepare(unet, optimizer, train_dataloader)
    global_step = 0
    done = False
    while not done:
        for batch in train_dataloader:
            with accelerator.accumulate(unet):
                latents = batch["latents"].to(accelerator.device)
                prompt_embeds, added_cond = compute_embeddings(batch)
                noise = torch.randn_like(latents)
                t = torch.randint(0, noise_scheduler.config.num_train_timesteps, (latents.shape[0],),
                                  device=latents.device)
                noisy = noise_scheduler.add_noise(latents, noise, t)
                pred = unet(noisy, t, prompt_embeds, added_cond_kwargs=added_cond).sample
                loss = F.mse_loss(pred.float(), noise.float())
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()
            if not accelerator.sync_gradients:
                continue
            global_step += 1
            accelerator.log({"train_loss": loss.item()}, step=global_step)
            if global_step % args.checkpointing_steps == 0:
                if accelerator.is_main_process:
                    rotate(args.output_dir, args.checkpoints_total_limit)
                accelerator.wait_for_everyone()
                save_path = os.path.join(args.output_dir, f"checkpoint-{global_step}")
                accelerator.save_state(save_path)
                logger.info(f"Saved state to {save_path}", main_process_only=True)
            if global_step >= args.max_train_steps:
                done = True
                break
    accelerator.wait_for_everyone()
    accelerator.end_training()
