"""LoRA training of an SDXL UNet on cached latents with SimpleTuner's trainer, launched with
`accelerate launch --multi_gpu train.py ...`: the aspect buckets of every dataset are built on the
main process, split between the processes, and the number of training steps is derived from the
batches each process ends up with when only --num_train_epochs is given.

Thread: https://github.com/bghira/SimpleTuner/pull/1391 ("split_buckets_between_processes: Fix issue
with imbalanced steps between processes", merged)
Project: bghira/SimpleTuner (helpers/metadata/backends/base.py, helpers/data_backend/factory.py,
helpers/training/trainer.py)
What hung: `split_buckets_between_processes` splits each aspect bucket with
`accelerator.split_between_processes(trimmed_images, apply_padding=False)`, so "a bucket with an odd
number of images, an odd effective_batch_size, or the count of trimmed_images otherwise ending up as
odd results in each process potentially having a different idea of max_train_steps after
_recalculate_training_steps() is called (as it takes into account metadata bucket counts). In the
case where the main process thinks its max_train_steps is greater than any other non-main processes
when train() arrives at that step, it will hang until timeout on self.accelerate.gather() as a
non-main process has left the training loop but the main process still has steps outstanding."
Fix (the PR): when --max_train_steps is not given (epochs drive the run), `configure_multi_databackend`
passes `apply_padding=True` down to `split_buckets_between_processes`, so every process gets the same
number of images per bucket and computes the same max_train_steps.
Expected rankcheck finding: RC103 on the `break` that leaves the training loop once
`global_step >= max_train_steps` (helpers/training/trainer.py), a per-process exit from the loop
whose body issues `accelerator.gather` (and the DDP backward): max_train_steps is this process's
count, derived from the length of its share of the buckets.
Inferred: the UNet/LoRA setup, the cached-latent dataset and the bucket sampler are reduced for this
reconstruction; validation, EMA, webhooks and the prefetch thread of the real trainer are left out.
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
