"""Fine-tune a sequence classifier on a streamed JSONL corpus built as a torch DataPipe
(`IterableWrapper(...).shuffle().sharding_filter().map(encode)`), launched with
`accelerate launch --num_processes 4 train_datapipe.py ...`. Because the dataset is iterable, the
loaders are prepared in dispatch mode: process 0 reads the DataPipe and broadcasts each batch, which
every process slices.

Thread: https://github.com/huggingface/accelerate/pull/1709 ("Fix the bug where DataLoaderDispatcher
gets stuck in an infinite wait when the dataset is an IterDataPipe during multi-process training")
Project: huggingface/accelerate (0.21.0; the dispatcher lives in accelerate_lite/data_loader.py)
What hung: the PR, by its author: "In newer version of pytorch, the iterator of `DataLoader` will
try to broadcast a shared seed across all distributed processes ... In the current implementation
of `DataLoaderDispatcher`, the iterator is only created in the main process. This causes the
training to hang when dataset is an `IterDataPipe`." `DataLoaderDispatcher.__iter__` called
`super().__iter__()` (torch's `DataLoader.__iter__`) under `if self.state.process_index == 0:`;
for an IterDataPipe under an initialized process group, torch's `_BaseDataLoaderIter.__init__`
creates a gloo group and shares the DataPipe seed with a broadcast, so process 0 waited there for
the other processes, which had gone on to the `broadcast_object_list` of `_fetch_batches`.
Fix (the PR, merged): every process creates the iterator (`main_iterator = super().__iter__()`
unconditionally, "we need to create iterator for all dist processes. But, we only iterate through
the DataLoader on process 0"); the remainder bookkeeping moves from `__init__` to `__iter__`.
Expected rankcheck finding: RC101 on the `super().__iter__()` reached only by process 0 in
accelerate_lite/data_loader.py (its collectives are torch's, inside the DataLoader iterator).
(Inferred: the task, model and JSONL layout; the PR's own reproduction is
`IterableWrapper(range(21)).shuffle().map(lambda x: x + 1)` through `accelerator.prepare`. The script
calls the public `prepare_data_loader` of the trimmed copy directly, so that the copy is the one
that runs.)
"""
import argparse
import json
import math

import torch
from accelerate import Accelerator
from accelerate.utils import set_seed
from torch.utils.data import DataLoader
from torch.utils.data.datapipes.iter import IterableWrapper
from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_linear_schedule_with_warmup

from accelerate_lite import prepare_data_loader


def parse_args():
    parser = argparse.ArgumentParser(description="Streamed sequence classification with accelerate")
    parser.add_argument("--model_name_or_path", type=str, default="bert-base-uncased")
    parser.add_argument("--train_file", type=str, required=True)
    parser.add_argument("--validation_file", type=str, required=True)
    parser.add_argument("--max_length", type=int, default=128)
    parser.add_argument("--per_device_train_batch_size", type=int, default=16)
    parser.add_argument("--per_device_eval_batch_size", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=2e-5)
    parser.add_argument("--weight_decay", type=float, default=0.01)
    parser.add_argument("--num_train_epochs", type=int, default=3)
    parser.add_argument("--num_warmup_steps", type=int, default=100)
    parser.add_argument("--shuffle_buffer", type=int, default=10000)
    parser.add_argument("--logging_steps", type=int, default=50)
    parser.add_argument("--output_dir", type=str, default="out/streamed-classifier")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--mixed_precision", type=str, default="no", choices=["no", "fp16", "bf16"])
    return parser.parse_args()


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def build_datapipe(examples, tokenizer, max_length, shuffle_buffer=None):
    def encode(example):
        enc = tokenizer(
            example["text"],
            truncation=True,
            padding="max_length",
            max_length=max_length,
            return_tensors="pt",
        )
        return {
            "input_ids": enc["input_ids"][0],
            "attention_mask": enc["attention_mask"][0],
            "labels": torch.tensor(int(example["label"])),
        }

    dp = IterableWrapper(examples)
    if shuffle_buffer:
        dp = dp.shuffle(buffer_size=shuffle_buffer)
    dp = dp.sharding_filter()
    return dp.map(encode)


def main():
    args = parse_args()
    accelerator = Accelerator(mixed_precision=args.mixed_precision)
    set_seed(args.seed)

    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    train_examples = read_jsonl(args.train_file)
    eval_examples = read_jsonl(args.validation_file)
    num_labels = len({int(ex["label"]) for ex in train_examples})

    train_dp = build_datapipe(train_examples, tokenizer, args.max_length, shuffle_buffer=args.shuffle_buffer)
    eval_dp = build_datapipe(eval_examples, tokenizer, args.max_length)
    train_dataloader = DataLoader(train_dp, batch_size=args.per_device_train_batch_size, shuffle=True)
    eval_dataloader = DataLoader(eval_dp, batch_size=args.per_device_eval_batch_size)

    model = AutoModelForSequenceClassification.from_pretrained(args.model_name_or_path, num_labels=num_labels)
    no_decay = ["bias", "LayerNorm.weight"]
    grouped_parameters = [
        {
            "params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)],
            "weight_decay": args.weight_decay,
        },
        {
            "params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)],
            "weight_decay": 0.0,
        },
    ]
    optimizer = torch.optim.AdamW(grouped_parameters, lr=args.learning_rate)
    steps_per_epoch = math.ceil(
        len(train_examples) / (args.per_device_train_batch_size * accelerator.num_processes)
    )
    lr_scheduler = get_linear_schedule_with_warmup(
        optimizer,
        num_warmup_steps=args.num_warmup_steps,
        num_training_steps=steps_per_epoch * args.num_train_epochs,
    )
    model, optimizer, lr_scheduler = accelerator.prepare(model, optimizer, lr_scheduler)

    # IterDataPipes are dispatched from process 0 (the default for iterable datasets).
    train_dataloader = prepare_data_loader(
        train_dataloader,
        device=accelerator.device,
        num_processes=accelerator.num_processes,
        process_index=accelerator.process_index,
        put_on_device=True,
        dispatch_batches=True,
    )
    eval_dataloader = prepare_data_loader(
        eval_dataloader,
        device=accelerator.device,
        num_processes=accelerator.num_processes,
        process_index=accelerator.process_index,
        put_on_device=True,
        dispatch_batches=True,
    )

    completed_steps = 0
    for epoch in range(args.num_train_epochs):
        model.train()
        running_loss = 0.0
        for step, batch in enumerate(train_dataloader):
            outputs = model(**batch)
            loss = outputs.loss
            accelerator.backward(loss)
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
            running_loss += loss.detach().float().item()
            completed_steps += 1
            if completed_steps % args.logging_steps == 0:
                accelerator.print(
                    f"epoch {epoch} step {completed_steps}: loss {running_loss / (step + 1):.4f}"
                )

        model.eval()
        correct, total = 0, 0
        for batch in eval_dataloader:
            with torch.no_grad():
                logits = model(**batch).logits
            predictions = logits.argmax(dim=-1)
            predictions, references = accelerator.gather_for_metrics((predictions, batch["labels"]))
            correct += (predictions == references).sum().item()
            total += references.numel()
        accelerator.print(f"epoch {epoch}: eval accuracy {correct / max(total, 1):.4f}")

    accelerator.wait_for_everyone()
    unwrapped_model = accelerator.unwrap_model(model)
    unwrapped_model.save_pretrained(
        args.output_dir, is_main_process=accelerator.is_main_process, save_function=accelerator.save
    )
    if accelerator.is_main_process:
        tokenizer.save_pretrained(args.output_dir)


if __name__ == "__main__":
    main()
