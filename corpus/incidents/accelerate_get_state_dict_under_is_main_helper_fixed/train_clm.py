"""Safe twin of accelerate_get_state_dict_under_is_main_helper: the export (and so the ZeRO-3
state-dict consolidation) runs on every process; only the main process writes files.

Thread: https://github.com/huggingface/accelerate/issues/285 ("Issues with saving model/optimizer and loading them back")
Project: huggingface/accelerate
"""
import argparse
import math
import os

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer, default_data_collator, get_scheduler

from dist_utils import is_main, log_main


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name_or_path", default="gpt2-large")
    p.add_argument("--output_dir", default="clm-out")
    p.add_argument("--num_train_epochs", type=int, default=3)
    p.add_argument("--per_device_train_batch_size", type=int, default=2)
    p.add_argument("--learning_rate", type=float, default=2e-5)
    return p.parse_args()


def export_hf(accelerator, model, tokenizer, out_dir):
    unwrapped = accelerator.unwrap_model(model)
    state_dict = accelerator.get_state_dict(model)
    unwrapped.save_pretrained(out_dir, state_dict=state_dict, save_function=accelerator.save,
                              is_main_process=accelerator.is_main_process)
    if is_main():
        tokenizer.save_pretrained(out_dir)


def main(train_dataset):
    args = parse_args()
    accelerator = Accelerator()
    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)
    loader = DataLoader(train_dataset, shuffle=True, collate_fn=default_data_collator,
                        batch_size=args.per_device_train_batch_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    steps = args.num_train_epochs * math.ceil(len(loader) / accelerator.num_processes)
    scheduler = get_scheduler("cosine", optimizer=optimizer, num_warmup_steps=100,
                              num_training_steps=steps)
    model, optimizer, loader, scheduler = accelerator.prepare(model, optimizer, loader, scheduler)

    for epoch in range(args.num_train_epochs):
        model.train()
        for batch in loader:
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
        log_main(f"epoch {epoch} done, last loss {loss.item():.4f}")
        accelerator.wait_for_everyone()
        export_hf(accelerator, model, tokenizer, os.path.join(args.output_dir, f"epoch_{epoch}"))
    accelerator.end_training()
