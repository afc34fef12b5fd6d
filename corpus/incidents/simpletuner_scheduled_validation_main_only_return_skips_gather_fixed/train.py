"""LoRA-free full fine-tune of a diffusion UNet with accelerate, validating every N steps."""
import argparse
import json
import logging
import math

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from diffusers import AutoencoderKL, DDPMScheduler, UNet2DConditionModel
from torch.utils.data import DataLoader, Dataset
from transformers import CLIPTextModel, CLIPTokenizer

from helpers.validation import Validation

logger = logging.getLogger("SimpleTuner")


class CaptionedLatents(Dataset):
    """Pre-encoded VAE latents with their captions (the usual SimpleTuner cache layout)."""

    def __init__(self, manifest):
        with open(manifest, "r") as f:
            self.records = json.load(f)

    def __len__(self):
        return len(self.records)

    def __getitem__(self, idx):
        rec = self.records[idx]
        return {"latents": torch.load(rec["latent_path"]), "caption": rec["caption"]}


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--pretrained_model_name_or_path", required=True)
    p.add_argument("--data_manifest", required=True)
    p.add_argument("--output_dir", default="output")
    p.add_argument("--train_batch_size", type=int, default=4)
    p.add_argument("--gradient_accumulation_steps", type=int, default=1)
    p.add_argument("--learning_rate", type=float, default=1e-5)
    p.add_argument("--max_train_steps", type=int, default=10000)
    p.add_argument("--validation_step_interval", type=int, default=250)
    p.add_argument("--validation_multigpu", default="batch-parallel", choices=["single-gpu", "batch-parallel"])
    p.add_argument("--validation_prompts", nargs="*", default=["a photo of a cat", "a watercolor lighthouse"])
    p.add_argument("--validation_seed", type=int, default=42)
    p.add_argument("--validation_num_inference_steps", type=int, default=30)
    p.add_argument("--validation_guidance", type=float, default=7.0)
    return p.parse_args()


def main():
    config = parse_args()
    accelerator = Accelerator(gradient_accumulation_steps=config.gradient_accumulation_steps, mixed_precision="bf16")

    tokenizer = CLIPTokenizer.from_pretrained(config.pretrained_model_name_or_path, subfolder="tokenizer")
    text_encoder = CLIPTextModel.from_pretrained(config.pretrained_model_name_or_path, subfolder="text_encoder")
    vae = AutoencoderKL.from_pretrained(config.pretrained_model_name_or_path, subfolder="vae")
    unet = UNet2DConditionModel.from_pretrained(config.pretrained_model_name_or_path, subfolder="unet")
    noise_scheduler = DDPMScheduler.from_pretrained(config.pretrained_model_name_or_path, subfolder="scheduler")
    text_encoder.requires_grad_(False)
    vae.requires_grad_(False)
    text_encoder.to(accelerator.device)

    optimizer = torch.optim.AdamW(unet.parameters(), lr=config.learning_rate)
    loader = DataLoader(CaptionedLatents(config.data_manifest), batch_size=config.train_batch_size, shuffle=True)
    unet, optimizer, loader = accelerator.prepare(unet, optimizer, loader)

    validation = Validation(
        accelerator,
        config,
        unet,
        {"validation_prompts": config.validation_prompts},
    )

    global_step = 0
    num_epochs = math.ceil(config.max_train_steps / max(len(loader), 1))
    for epoch in range(num_epochs):
        unet.train()
        for step, batch in enumerate(loader):
            with accelerator.accumulate(unet):
                latents = batch["latents"].to(accelerator.device)
                ids = tokenizer(batch["caption"], padding="max_length", truncation=True,
                                max_length=tokenizer.model_max_length, return_tensors="pt").input_ids
                with torch.no_grad():
                    encoder_hidden_states = text_encoder(ids.to(accelerator.device))[0]
                noise = torch.randn_like(latents)
                timesteps = torch.randint(0, noise_scheduler.config.num_train_timesteps, (latents.shape[0],), device=latents.device)
                noisy = noise_scheduler.add_noise(latents, noise, timesteps)
                pred = unet(noisy, timesteps, encoder_hidden_states).sample
                loss = F.mse_loss(pred.float(), noise.float())
                accelerator.backward(loss)
                optimizer.step()
                optimizer.zero_grad()

            if accelerator.sync_gradients:
                global_step += 1
                if accelerator.is_main_process and global_step % 10 == 0:
                    logger.info(f"step {global_step} loss {loss.item():.4f}")

                unet.eval()
                try:
                    validation.run_validations(validation_type="intermediary", step=step, global_step=global_step)
                except Exception as error:
                    logger.error(f"Validation run failed at step {step}: {error}", exc_info=True)
                unet.train()
                accelerator.wait_for_everyone()

            if global_step >= config.max_train_steps:
                break

    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        accelerator.unwrap_model(unet).save_pretrained(f"{config.output_dir}/unet")
    accelerator.end_training()


if __name__ == "__main__":
    main()
