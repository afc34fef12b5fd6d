"""Sentence classification fine-tuning with Hugging Face accelerate (`accelerate launch --num_processes 4
train_text_classifier.py`), printing each process's share of the epoch in rank order with the
multi-process logger's `in_order=True`.

Thread: https://github.com/huggingface/accelerate/issues/3939 ("[Bug] in_order parameter in logging is
broken - deadlock or ignored", closed by the fix "Fix in_order logging parameter (deadlock/ignored) #3939",
commit e8f22fce, PR #3950)
Project: huggingface/accelerate (src/accelerate/logging.py, MultiProcessAdapter.log, accelerate 1.12)
What hung: `logger.info(msg, in_order=True)` with the default `main_process_only=True`. In
`MultiProcessAdapter.log` the `if self._should_log(main_process_only):` arm (taken by the main process only)
logs and returns with no collective, while the `elif in_order:` arm (taken by every other process) loops
over the processes calling `state.wait_for_everyone()` once per process: ranks 1..3 wait in barriers the
main process never enters ("Case 1 ... program hangs").
Fix (the merged commit): process the message once, take the plain-log arm only when `not in_order and
self._should_log(main_process_only)`, so that with `in_order=True` every process takes the barrier loop
(`main_process_only` is ignored when `in_order` is passed).
Expected rankcheck finding: RC106 on `if self._should_log(main_process_only):` at utils/logging_utils.py:49,
a rank-dependent branch whose arms issue different collective sequences (none vs. num_processes
barriers).
Inferred: the training program around the logging call (model, data, loop) is written for this
reconstruction; utils/logging_utils.py reproduces accelerate 1.12's logging.py (MultiProcessAdapter and
get_logger) so that the defect is inside the case -- in the incident it is imported from accelerate.
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
