"""Safe twin of accelerate_wait_for_everyone_in_else.py: every process reaches
`wait_for_everyone()`; the saving alone is the main process's job.

Thread: https://github.com/huggingface/accelerate/issues/2690
"""
import argparse
import math
import os

import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader
from transformers import AutoModelForCausalLM, AutoTokenizer, default_data_collator


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name_or_path", required=True)
    parser.add_argument("--output_dir", default="clm-out")
    parser.add_argument("--per_device_train_batch_size", type=int, default=8)
    parser.add_argument("--num_train_epochs", type=int, default=3)
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    parser.add_argument("--checkpointing_steps", type=str, default="epoch")
    return parser.parse_args()


def save_final(accelerator, model, tokenizer, output_dir):
    accelerator.wait_for_everyone()
    if accelerator.is_main_process:
        unwrapped_model = accelerator.unwrap_model(model)
        state_dict = accelerator.get_state_dict(model)
        unwrapped_model.save_pretrained(output_dir, state_dict=state_dict, safe_serialization=True)
        tokenizer.save_pretrained(output_dir)


def main(train_dataset):
    args = parse_args()
    accelerator = Accelerator()
    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)
    train_dataloader = DataLoader(train_dataset, shuffle=True, collate_fn=default_data_collator, batch_size=args.per_device_train_batch_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    model, optimizer, train_dataloader = accelerator.prepare(model, optimizer, train_dataloader)

    for epoch in range(args.num_train_epochs):
        model.train()
        for batch in train_dataloader:
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        if args.checkpointing_steps == "epoch":
            save_final(accelerator, model, tokenizer, os.path.join(args.output_dir, f"epoch_{epoch}"))

    save_final(accelerator, model, tokenizer, args.output_dir)
