"""Causal-LM fine-tuning with accelerate + DeepSpeed ZeRO-3; at each epoch end the model is exported
in HF format, with the export guarded by a rank helper from another module.

Thread: https://github.com/huggingface/accelerate/issues/285 ("Issues with saving model/optimizer and loading them back")
Project: huggingface/accelerate
What hung: users reported that saving "blocks the program from continuing" under DeepSpeed. The
explanation given in the thread (ParthaEth): with ZeRO-3, `save_pretrained(...,
state_dict=accelerator.get_state_dict(model))` "you have to run it from all processes" --
`get_state_dict` consolidates the 16-bit weights, gathering every partition, so when only the main
process calls it, rank 0 waits in the gather while the others have moved on to the next epoch.
Fix: call `accelerator.get_state_dict(model)` and `save_pretrained(..., is_main_process=
accelerator.is_main_process, save_function=accelerator.save)` on every process; only file writes
are restricted to the main process by `is_main_process`.
Inferred: the `dist_utils.is_main()` helper and the epoch-end export layout.
Expected rankcheck finding: RC101 on the `export_hf(...)` call under `is_main()` (it reaches
`accelerator.get_state_dict(model)`).
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
    unwrapped.save_pretrained(out_dir, state_dict=state_dict, save_function=accelerator.save)
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
        if is_main():
            export_hf(accelerator, model, tokenizer,  # expect: RC101
                      os.path.join(args.output_dir, f"epoch_{epoch}"))
    accelerator.end_training()
