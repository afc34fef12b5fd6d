"""Safe twin of diffusers_lora_save_state_main_process_deepspeed/: under the DeepSpeed backend
every process calls save_state (the engine's save_checkpoint is collective); the save hook, now
run on every rank, writes the LoRA weights on the main process only.

Thread: https://github.com/huggingface/diffusers/issues/2606
"""
import argparse
import math
import os

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from accelerate.utils import DistributedType
from diffusers import DDPMScheduler, UNet2DConditionModel
from peft import LoraConfig
from tqdm.auto import tqdm

from checkpointing import save_training_state
from data import build_train_dataloader, encode_prompts


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--pretrained_model_name_or_path", required=True)
    p.add_argument("--train_data_dir", required=True)
    p.add_argument("--output_dir", default="sd-lora")
    p.add_argument("--rank", type=int, default=4)
    p.add_argument("--learning_rate", type=float, default=1e-4)
    p.add_argument("--train_batch_size", type=int, default=4)
    p.add_argument("--max_train_steps", type=int, default=15000)
    p.add_argument("--gradient_accumulation_steps", type=int, default=1)
    p.add_argument("--checkpointing_steps", type=int, default=500)
    p.add_argument("--checkpoints_total_limit", type=int, default=None)
    return p.parse_args()


def main():
    args = parse_args()
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps,
                              mixed_precision="fp16")
    noise_scheduler = DDPMScheduler.from_pretrained(args.pretrained_model_name_or_path, subfolder="scheduler")
    unet = UNet2DConditionModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="unet")
    unet.requires_grad_(False)
    unet.add_adapter(LoraConfig(r=args.rank, lora_alpha=args.rank,
                                target_modules=["to_k", "to_q", "to_v", "to_out.0"]))
    lora_params = [p for p in unet.parameters() if p.requires_grad]

    def save_model_hook(models, weights, output_dir):
        if accelerator.is_main_process:
            for model in models:
                accelerator.unwrap_model(model).save_attn_procs(output_dir)
                if weights:
                    weights.pop()

    accelerator.register_save_state_pre_hook(save_model_hook)

    optimizer = torch.optim.AdamW(lora_params, lr=args.learning_rate)
    train_dataloader = build_train_dataloader(args.train_data_dir, args.train_batch_size)
    unet, optimizer, train_dataloader = accelerator.prepare(unet, optimizer, train_dataloader)
    os.makedirs(args.output_dir, exist_ok=True)

    epochs = math.ceil(args.max_train_steps / len(train_dataloader))
    progress = tqdm(range(args.max_train_steps), disable=not accelerator.is_local_main_process)
    global_step = 0
    for _ in range(epochs):
        unet.train()
        for batch in train_dataloader:
            with accelerator.accumulate(unet):
                latents = batch["latents"].to(accelerator.device)
                noise = torch.randn_like(latents)
                t = torch.randint(0, noise_scheduler.config.num_train_timesteps,
                                  (latents.shape[0],), device=latents.device)
                noisy = noise_scheduler.add_noise(latents, noise, t)
                pred = unet(noisy, t, encode_prompts(batch["input_ids"], accelerator.device)).sample
                loss = F.mse_loss(pred.float(), noise.float())
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()

            if accelerator.sync_gradients:
                progress.update(1)
                global_step += 1
                if global_step % args.checkpointing_steps == 0:
                    # DeepSpeed requires saving on every device; saving on the main process only
                    # leaves it waiting in the engine's collectives.
                    if accelerator.distributed_type == DistributedType.DEEPSPEED or accelerator.is_main_process:
                        save_training_state(accelerator, args.output_dir, global_step,
                                            args.checkpoints_total_limit)
            if global_step >= args.max_train_steps:
                break

    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
