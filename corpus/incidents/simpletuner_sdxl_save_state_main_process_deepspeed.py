"""SDXL fine-tuning (SimpleTuner train_sdxl.py era) run with accelerate + DeepSpeed on several GPUs:
the periodic checkpoint rotates old checkpoints and calls `accelerator.save_state` inside the
main-process block, next to the validation-image bookkeeping.

Thread: https://github.com/bghira/SimpleTuner/issues/262 ("Saving checkpoint hangs when using DeepSpeed")
Project: bghira/SimpleTuner
What hung: "when using DeepSpeed, `accelerator.save_state()` will hang". The reporter traced it to
train_sdxl.py calling `save_state` for the main process only; with DeepSpeed, save_state runs the
engine's save_checkpoint, which every rank must enter, so rank 0 waited there while the other ranks
went on with training collectives.
Fix: call `accelerator.save_state()` on all processes (reporter, citing diffusers#2606; the
maintainer shipped it on the release branch for the reporter to test); checkpoint rotation stays
main-process only.
Inferred: the surrounding loop and the save-hook details are reconstructed.
Expected rankcheck finding: RC101 on the guarded `accelerator.save_state(save_path)` call.
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
            if accelerator.is_main_process:
                if global_step % args.checkpointing_steps == 0:
                    rotate(args.output_dir, args.checkpoints_total_limit)
                    save_path = os.path.join(args.output_dir, f"checkpoint-{global_step}")
                    accelerator.save_state(save_path)  # expect: RC101
                    logger.info(f"Saved state to {save_path}")
            if global_step >= args.max_train_steps:
                done = True
                break
    accelerator.wait_for_everyone()
    accelerator.end_training()
