"""Fixed twin of accelerate_vla_save_state_under_main_process: every rank calls save_state; only the
summary write stays on the main process.
"""
import argparse
import json
import os
from datetime import timedelta

import torch
from accelerate import Accelerator
from accelerate.utils import InitProcessGroupKwargs, ProjectConfiguration
from torch.utils.data import DataLoader
from transformers import AutoModelForVision2Seq, AutoProcessor, get_cosine_schedule_with_warmup


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="declare-lab/nora")
    p.add_argument("--output_dir", default="runs/nora_ft")
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--batch_size", type=int, default=16)
    p.add_argument("--max_steps", type=int, default=100_000)
    p.add_argument("--checkpoint_save_frequency", type=int, default=2_000)
    return p.parse_args()


def build_loader(processor, batch_size):
    from vla_data import RLDSActionDataset, collate_actions  # project-local dataset module

    ds = RLDSActionDataset(processor=processor)
    return DataLoader(ds, batch_size=batch_size, collate_fn=collate_actions, num_workers=4)


def main():
    config = parse_args()
    accelerator = Accelerator(
        gradient_accumulation_steps=1,
        mixed_precision="bf16",
        project_config=ProjectConfiguration(project_dir=config.output_dir),
        kwargs_handlers=[InitProcessGroupKwargs(timeout=timedelta(minutes=30))],
    )
    processor = AutoProcessor.from_pretrained(config.model)
    model = AutoModelForVision2Seq.from_pretrained(config.model, torch_dtype=torch.bfloat16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr)
    scheduler = get_cosine_schedule_with_warmup(optimizer, 1000, config.max_steps)
    loader = build_loader(processor, config.batch_size)
    model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)

    completed_steps, total_loss = 0, 0.0
    model.train()
    while completed_steps < config.max_steps:
        for batch in loader:
            with accelerator.accumulate(model):
                loss = model(**batch).loss
                accelerator.backward(loss)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
            total_loss += loss.detach().float().item()
            if accelerator.sync_gradients:
                completed_steps += 1
                if completed_steps % config.checkpoint_save_frequency == 0 and completed_steps > 0:
                    accelerator.save_state(os.path.join(config.output_dir, f"steps_{completed_steps}"))
                    if accelerator.is_main_process:
                        summary = {"steps": completed_steps, "train_loss": total_loss / config.checkpoint_save_frequency}
                        with open(os.path.join(config.output_dir, "summary.jsonl"), "a") as f:
                            f.write(json.dumps(summary) + "\n")
                    total_loss = 0.0
            if completed_steps >= config.max_steps:
                break
    accelerator.wait_for_everyone()
    accelerator.end_training()


if __name__ == "__main__":
    main()
