"""Token-classification fine-tuning with `accelerate launch` (multi-GPU): the collate function pads
each batch only to its own longest sentence, and the evaluation loop gathers the per-token
predictions and labels of every process with `accelerator.gather` to compute seqeval metrics.

Thread: https://github.com/huggingface/accelerate/issues/167 ("Some issue about the all_gather")
Project: huggingface/accelerate
What hung: "if we fit the sentence length at the stage of collation_function, and we want to gather
the prediction to the same device to do some logging/evaluation, we will get stuck." (padding every
sentence to one fixed length while reading the data "works fine")
Fix (sgugger, maintainer): "There is a `pad_across_processes` method you can use for this", as in
the token-classification example: pad predictions and labels on dim 1 to the longest length across
processes before `accelerator.gather` (introduced in accelerate#19 because such tensors "can't be
gathered (the script will hang)").
Expected rankcheck finding: RC104 on the two `accelerator.gather` calls whose dim-1 length is the
batch's own padded length.
Inferred: the reporter does not name the task; token classification follows the example the
maintainer pointed to (run_ner_no_trainer.py).
"""
import argparse

import evaluate
import torch
from accelerate import Accelerator
from datasets import load_dataset
from torch.utils.data import DataLoader
from transformers import AutoModelForTokenClassification, AutoTokenizer, DataCollatorForTokenClassification


def parse_args():
    parser = argparse.ArgumentParser(description="NER fine-tuning without Trainer")
    parser.add_argument("--model_name_or_path", default="bert-base-cased")
    parser.add_argument("--dataset_name", default="conll2003")
    parser.add_argument("--per_device_batch_size", type=int, default=16)
    parser.add_argument("--learning_rate", type=float, default=3e-5)
    parser.add_argument("--num_train_epochs", type=int, default=3)
    return parser.parse_args()


def evaluate_epoch(accelerator, model, eval_dataloader, label_names, metric):
    model.eval()
    for batch in eval_dataloader:
        with torch.no_grad():
            outputs = model(**batch)
        predictions = outputs.logits.argmax(dim=-1)
        labels = batch["labels"]
        predictions_gathered = accelerator.gather(predictions)  # expect: RC104
        labels_gathered = accelerator.gather(labels)  # expect: RC104
        preds = predictions_gathered.cpu().tolist()
        refs = labels_gathered.cpu().tolist()
        true_preds = [[label_names[p] for p, l in zip(ps, ls) if l != -100] for ps, ls in zip(preds, refs)]
        true_refs = [[label_names[l] for p, l in zip(ps, ls) if l != -100] for ps, ls in zip(preds, refs)]
        metric.add_batch(predictions=true_preds, references=true_refs)
    return metric.compute()


def main():
    args = parse_args()
    accelerator = Accelerator()
    raw = load_dataset(args.dataset_name)
    label_names = raw["train"].features["ner_tags"].feature.names
    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)

    def tokenize_and_align(examples):
        enc = tokenizer(examples["tokens"], truncation=True, is_split_into_words=True)
        enc["labels"] = []
        for i, tags in enumerate(examples["ner_tags"]):
            word_ids = enc.word_ids(batch_index=i)
            enc["labels"].append([-100 if w is None else tags[w] for w in word_ids])
        return enc

    processed = raw.map(tokenize_and_align, batched=True, remove_columns=raw["train"].column_names)
    collator = DataCollatorForTokenClassification(tokenizer)  # pads to the longest sentence of the batch
    train_dataloader = DataLoader(processed["train"], shuffle=True, collate_fn=collator, batch_size=args.per_device_batch_size)
    eval_dataloader = DataLoader(processed["validation"], collate_fn=collator, batch_size=args.per_device_batch_size)

    model = AutoModelForTokenClassification.from_pretrained(args.model_name_or_path, num_labels=len(label_names))
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.learning_rate)
    model, optimizer, train_dataloader, eval_dataloader = accelerator.prepare(
        model, optimizer, train_dataloader, eval_dataloader
    )
    metric = evaluate.load("seqeval")

    for epoch in range(args.num_train_epochs):
        model.train()
        for batch in train_dataloader:
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
        results = evaluate_epoch(accelerator, model, eval_dataloader, label_names, metric)
        accelerator.print(f"epoch {epoch}: f1 = {results['overall_f1']:.4f}")


if __name__ == "__main__":
    main()
