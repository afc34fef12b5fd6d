"""LoRA training of an SDXL UNet on cached latents with SimpleTuner's trainer, launched with
`accelerate launch --multi_gpu train.py ...` -- fixed twin: when only --num_train_epochs is given,
the aspect buckets are split between the processes with padding, so every process computes the
same max_train_steps and all of them leave the training loop at the same step.

Thread: https://github.com/bghira/SimpleTuner/pull/1391 ("split_buckets_between_processes: Fix issue
with imbalanced steps between processes", merged)
Fix: `configure_multi_databackend` sets `apply_padding = True` when max_train_steps is unset or 0 and
passes it to `split_buckets_between_processes`, which forwards it to
`accelerator.split_between_processes(trimmed_images, apply_padding=apply_padding)`.
"""
import argparse
import logging

from accelerate import Accelerator
from diffusers import DDPMScheduler, UNet2DConditionModel
from peft import LoraConfig

from helpers.training.trainer import Trainer

logging.basicConfig(level=logging.INFO)


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrained_model_name_or_path", required=True)
    parser.add_argument("--data_backend_config", required=True)
    parser.add_argument("--output_dir", default="output/models")
    parser.add_argument("--train_batch_size", type=int, default=4)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--max_train_steps", type=int, default=0)
    parser.add_argument("--num_train_epochs", type=int, default=10)
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--lr_warmup_steps", type=int, default=100)
    parser.add_argument("--max_grad_norm", type=float, default=1.0)
    parser.add_argument("--checkpointing_steps", type=int, default=500)
    parser.add_argument("--lora_rank", type=int, default=16)
    parser.add_argument("--seed", type=int, default=42)
    return parser.parse_args()


def main():
    args = parse_args()
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps, mixed_precision="bf16")
    unet = UNet2DConditionModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="unet")
    unet.requires_grad_(False)
    unet.add_adapter(
        LoraConfig(r=args.lora_rank, lora_alpha=args.lora_rank, target_modules=["to_k", "to_q", "to_v", "to_out.0"])
    )
    noise_scheduler = DDPMScheduler.from_pretrained(args.pretrained_model_name_or_path, subfolder="scheduler")

    trainer = Trainer(args, accelerator, unet, noise_scheduler)
    trainer.init_data_backend()
    trainer.init_optimizer()
    trainer.train()


if __name__ == "__main__":
    main()
