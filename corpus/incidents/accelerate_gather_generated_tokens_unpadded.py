"""Summarization fine-tuning with accelerate (no Trainer): at evaluation every process generates
summaries for its shard and the token ids are gathered to compute ROUGE.

Thread: https://github.com/huggingface/accelerate/pull/19 ("Add utility to pad tensor across processes to max length")
Project: huggingface/accelerate (the pattern of transformers' run_summarization_no_trainer.py)
What hung: `generate` stops at a length that depends on each process's batch (beam search ends when
all beams hit EOS), so the generated id tensors have a different second dimension on each process.
`accelerator.gather` is an all_gather that requires equal shapes: as the PR states, predictions of
different sizes across processes "can't be gathered (the script will hang)".
Fix: `accelerator.pad_across_processes(generated_tokens, dim=1, pad_index=tokenizer.pad_token_id)`
before `gather` (the utility introduced by the PR, used since by the no_trainer examples).
Inferred: the PR names dynamic per-batch padding as its example; the generate-based evaluation loop
is the use the no_trainer scripts made of it. Labels here are padded to a fixed `max_target_length`
by the preprocessing, so only the generated ids differ in shape.
Expected rankcheck finding: RC104 on `accelerator.gather(generated_tokens)`.
"""
import argparse
import math

import evaluate
import torch
from accelerate import Accelerator
from torch.utils.data import DataLoader
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, DataCollatorForSeq2Seq, get_scheduler


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model_name_or_path", default="facebook/bart-base")
    p.add_argument("--per_device_batch_size", type=int, default=8)
    p.add_argument("--num_train_epochs", type=int, default=3)
    p.add_argument("--learning_rate", type=float, default=5e-5)
    p.add_argument("--max_target_length", type=int, default=128)
    p.add_argument("--num_beams", type=int, default=4)
    return p.parse_args()


def evaluate_rouge(accelerator, model, tokenizer, eval_dataloader, args):
    metric = evaluate.load("rouge")
    model.eval()
    for batch in eval_dataloader:
        with torch.no_grad():
            generated_tokens = accelerator.unwrap_model(model).generate(
                batch["input_ids"],
                attention_mask=batch["attention_mask"],
                max_length=args.max_target_length,
                num_beams=args.num_beams,
            )
            labels = batch["labels"]
            generated_tokens = accelerator.gather(generated_tokens)  # expect: RC104
            labels = accelerator.gather(labels)
            labels = torch.where(labels != -100, labels, tokenizer.pad_token_id)
            preds = tokenizer.batch_decode(generated_tokens.cpu(), skip_special_tokens=True)
            refs = tokenizer.batch_decode(labels.cpu(), skip_special_tokens=True)
            metric.add_batch(predictions=preds, references=refs)
    return metric.compute(use_stemmer=True)


def main(train_dataset, eval_dataset):
    args = parse_args()
    accelerator = Accelerator()
    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    model = AutoModelForSeq2SeqLM.from_pretrained(args.model_name_or_path)
    collator = DataCollatorForSeq2Seq(tokenizer, model=model, label_pad_token_id=-100)
    train_dataloader = DataLoader(train_dataset, shuffle=True, collate_fn=collator,
                                  batch_size=args.per_device_batch_size)
    eval_dataloader = DataLoader(eval_dataset, collate_fn=collator, batch_size=args.per_device_batch_size)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    max_steps = args.num_train_epochs * math.ceil(len(train_dataloader) / accelerator.num_processes)
    lr_scheduler = get_scheduler("linear", optimizer=optimizer, num_warmup_steps=0,
                                 num_training_steps=max_steps)
    model, optimizer, train_dataloader, eval_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, eval_dataloader, lr_scheduler
    )
    for epoch in range(args.num_train_epochs):
        model.train()
        for batch in train_dataloader:
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            lr_scheduler.step()
            optimizer.zero_grad()
        scores = evaluate_rouge(accelerator, model, tokenizer, eval_dataloader, args)
        if accelerator.is_main_process:
            print(f"epoch {epoch}: rouge {scores}")
