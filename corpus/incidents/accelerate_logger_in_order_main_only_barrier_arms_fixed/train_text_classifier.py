"""Sentence classification fine-tuning with accelerate, logging each process's epoch summary in rank
order with `in_order=True` -- safe twin.

Thread: https://github.com/huggingface/accelerate/issues/3939 (fix: commit e8f22fce, PR #3950)
Same program as accelerate_logger_in_order_main_only_barrier_arms with the merged fix in
utils/logging_utils.py: with `in_order=True` every process takes the barrier loop (the plain-log arm
requires `not in_order`), so all processes issue the same `wait_for_everyone()` sequence.
"""
import argparse

import torch
from accelerate import Accelerator
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding, get_scheduler

from utils.logging_utils import get_logger

logger = get_logger(__name__, log_level="INFO")


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name_or_path", default="bert-base-cased")
    parser.add_argument("--task", default="sst2")
    parser.add_argument("--per_device_batch_size", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=2e-5)
    parser.add_argument("--num_epochs", type=int, default=3)
    return parser.parse_args()


def main():
    args = parse_args()
    accelerator = Accelerator()
    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)

    raw = load_dataset("glue", args.task)
    with accelerator.main_process_first():
        tokenized = raw.map(
            lambda b: tokenizer(b["sentence"], truncation=True, max_length=128),
            batched=True,
            remove_columns=["sentence", "idx"],
        )
    tokenized = tokenized.rename_column("label", "labels")
    collator = DataCollatorWithPadding(tokenizer)
    train_dl = DataLoader(tokenized["train"], shuffle=True, batch_size=args.per_device_batch_size, collate_fn=collator)
    eval_dl = DataLoader(tokenized["validation"], batch_size=args.per_device_batch_size, collate_fn=collator)

    model = AutoModelForSequenceClassification.from_pretrained(args.model_name_or_path, num_labels=2)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    scheduler = get_scheduler("linear", optimizer, num_warmup_steps=100, num_training_steps=args.num_epochs * len(train_dl))
    model, optimizer, train_dl, eval_dl, scheduler = accelerator.prepare(model, optimizer, train_dl, eval_dl, scheduler)

    for epoch in range(args.num_epochs):
        model.train()
        local_loss, local_batches = 0.0, 0
        for batch in train_dl:
            outputs = model(**batch)
            accelerator.backward(outputs.loss)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            local_loss += outputs.loss.item()
            local_batches += 1

        # one line per process, in rank order
        logger.info(
            f"epoch {epoch} process {accelerator.process_index}: {local_batches} batches, "
            f"mean loss {local_loss / max(local_batches, 1):.4f}",
            in_order=True,
        )

        model.eval()
        correct, total = 0, 0
        for batch in eval_dl:
            with torch.no_grad():
                logits = model(**batch).logits
            preds, refs = accelerator.gather_for_metrics((logits.argmax(-1), batch["labels"]))
            correct += (preds == refs).sum().item()
            total += refs.numel()
        logger.info(f"epoch {epoch}: validation accuracy {correct / total:.4f}")

    accelerator.wait_for_everyone()
    accelerator.save_model(model, "sst2-classifier")
    accelerator.end_training()


if __name__ == "__main__":
    main()
