"""Latent-consistency distillation of an SDXL UNet, launched with `accelerate launch` and a DeepSpeed
config (4 GPUs, one node); periodic checkpoints go through a helper module.

Thread: https://github.com/luosiallen/latent-consistency-model/issues/110 ("Training script maybe incompatible with deepspeed")
Project: luosiallen/latent-consistency-model
What hung: with DeepSpeed enabled, training "stuck on `accelerator.save_state()`". The reporter traced
it: the script lets only the main process run `save_state`, whose DeepSpeed branch calls
`DeepSpeedEngine.save_checkpoint`, which calls `dist.barrier()` -- rank 0 waited in that barrier
while ranks 1-3 went on to the next step's collectives (reporter's own finding; the issue is open).
Fix: call `save_state` on every process and keep only checkpoint rotation under `is_main_process`
(the reporter's proposal, the same resolution as accelerate#1171).
Inferred: the save is factored into `checkpointing.save_training_checkpoint` here; in the script it
is inline.
Expected rankcheck finding: RC101 on the `save_training_checkpoint(...)` call under
`accelerator.is_main_process` (it reaches `accelerator.save_state` in checkpointing.py).
"""
import argparse
import math

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import ProjectConfiguration

from checkpointing import save_training_checkpoint


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--output_dir", default="lcm-sdxl-distilled")
    p.add_argument("--max_train_steps", type=int, default=20000)
    p.add_argument("--checkpointing_steps", type=int, default=500)
    p.add_argument("--checkpoints_total_limit", type=int, default=5)
    p.add_argument("--learning_rate", type=float, default=1e-6)
    p.add_argument("--ema_decay", type=float, default=0.95)
    p.add_argument("--gradient_accumulation_steps", type=int, default=1)
    return p.parse_args()


@torch.no_grad()
def update_ema(target_params, source_params, rate):
    for targ, src in zip(target_params, source_params):
        targ.detach().mul_(rate).add_(src, alpha=1 - rate)


def main(unet, target_unet, teacher_unet, solver, train_dataloader, encode_batch):
    args = parse_args()
    accelerator = Accelerator(
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        project_config=ProjectConfiguration(project_dir=args.output_dir),
    )
    optimizer = torch.optim.AdamW(unet.parameters(), lr=args.learning_rate)
    unet, optimizer = accelerator.prepare(unet, optimizer)
    target_unet.to(accelerator.device)
    teacher_unet.to(accelerator.device)

    global_step = 0
    num_epochs = math.ceil(args.max_train_steps / 1000)
    for epoch in range(num_epochs):
        for batch in train_dataloader:
            with accelerator.accumulate(unet):
                latents, cond, t, t_prev = encode_batch(batch, accelerator.device)
                noisy = solver.add_noise(latents, torch.randn_like(latents), t)
                pred = unet(noisy, t, cond).sample
                with torch.no_grad():
                    x_prev = solver.ddim_step(teacher_unet(noisy, t, cond).sample, noisy, t, t_prev)
                    target = target_unet(x_prev, t_prev, cond).sample
                loss = F.mse_loss(pred.float(), target.float())
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)

            if accelerator.sync_gradients:
                update_ema(target_unet.parameters(), unet.parameters(), args.ema_decay)
                global_step += 1
                if accelerator.is_main_process:
                    if global_step % args.checkpointing_steps == 0:
                        save_training_checkpoint(  # expect: RC101
                            accelerator, args.output_dir, global_step, args.checkpoints_total_limit
                        )
            if global_step >= args.max_train_steps:
                break
    accelerator.wait_for_everyone()
    accelerator.end_training()
