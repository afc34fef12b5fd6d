"""Parallel evaluation of a fine-tuned T5 model with Accelerate (6 GPUs, MULTI_GPU): each process
generates answers for its share of the evaluation set and the generated token ids are gathered
to compute exact-match / ROUGE on the main process.

Thread: https://github.com/huggingface/accelerate/issues/1326 ("Stuck when using
model.generate() and acclerator.gather() in the distributed setting")
Project: huggingface/accelerate
What hung: `generate()` stops when every sequence of the local batch has produced EOS (or at
max_length), so the generated tensor is (batch, L_rank) with a length that differs from process
to process. `accelerator.gather` all-gathers tensors that must have the same shape on every
process; with different sequence lengths the gather never completes and the evaluation is
stuck at the first batch where the lengths diverge.
Fix: pad the generated ids to the longest length across processes before gathering,
`accelerator.pad_across_processes(out, dim=1, pad_index=tokenizer.pad_token_id)` (the utility
Accelerate provides for this, accelerate#19; the same pattern as the official
`run_summarization_no_trainer.py`), then strip the padding when decoding.
Expected rankcheck finding: RC104 on the gather of the per-process generated tensor.
Inferred: the resolution text of the thread was not readable here (the issue is closed); the fix
is Accelerate's documented remedy for this exact reproduction. Dataset/metric details inferred.
"""
import argparse

import evaluate
import torch
from accelerate import Accelerator
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoTokenizer, DataCollatorForSeq2Seq, T5ForConditionalGeneration


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="checkpoints/t5-base-qa")
    p.add_argument("--data_file", default="data/dev.jsonl")
    p.add_argument("--batch_size", type=int, default=16)
    p.add_argument("--max_source_length", type=int, default=512)
    p.add_argument("--max_target_length", type=int, default=64)
    p.add_argument("--num_beams", type=int, default=4)
    return p.parse_args()


def main():
    args = parse_args()
    accelerator = Accelerator()
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = T5ForConditionalGeneration.from_pretrained(args.model)

    raw = load_dataset("json", data_files=args.data_file)["train"]

    def preprocess(ex):
        enc = tokenizer(ex["question"], ex["context"], max_length=args.max_source_length, truncation=True)
        enc["labels"] = tokenizer(text_target=ex["answer"], max_length=args.max_target_length,
                                  truncation=True)["input_ids"]
        return enc

    ds = raw.map(preprocess, batched=True, remove_columns=raw.column_names)
    collator = DataCollatorForSeq2Seq(tokenizer, model=model, label_pad_token_id=tokenizer.pad_token_id)
    eval_dataloader = DataLoader(ds, batch_size=args.batch_size, collate_fn=collator)
    model, eval_dataloader = accelerator.prepare(model, eval_dataloader)

    metric = evaluate.load("rouge")
    model.eval()
    for batch in eval_dataloader:
        with torch.no_grad():
            out = accelerator.unwrap_model(model).generate(
                input_ids=batch["input_ids"],
                attention_mask=batch["attention_mask"],
                max_length=args.max_target_length,
                num_beams=args.num_beams,
            )
        labels = accelerator.pad_across_processes(batch["labels"], dim=1, pad_index=tokenizer.pad_token_id)
        generated = accelerator.gather(out)  # expect: RC104
        labels = accelerator.gather(labels)
        preds = tokenizer.batch_decode(generated, skip_special_tokens=True)
        refs = tokenizer.batch_decode(labels, skip_special_tokens=True)
        metric.add_batch(predictions=preds, references=refs)

    result = metric.compute()
    if accelerator.is_main_process:
        print({k: round(v * 100, 2) for k, v in result.items()})


if __name__ == "__main__":
    main()
