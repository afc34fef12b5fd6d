"""Causal-LM fine-tuning on a TPU v3-8 with the transformers Trainer, pushing to the Hub -- safe twin.

Thread: https://github.com/huggingface/transformers/pull/12895 ("Fix push_to_hub for TPUs", merged)
Same program as transformers_tpu_push_to_hub_returns_before_save_rendezvous with the PR's fix in
hf_trainer/trainer.py: push_to_hub calls `self.save_model()` on every ordinal (so every ordinal meets
`xm.rendezvous("saving_checkpoint")` in _save_tpu) and only then returns on the ordinals that do not upload.
"""
import argparse
import math

import torch_xla.distributed.xla_multiprocessing as xmp
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, default_data_collator

from hf_trainer import Trainer, TrainingArguments


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name_or_path", default="gpt2")
    parser.add_argument("--dataset_name", default="wikitext")
    parser.add_argument("--dataset_config_name", default="wikitext-2-raw-v1")
    parser.add_argument("--block_size", type=int, default=512)
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--per_device_train_batch_size", type=int, default=8)
    parser.add_argument("--learning_rate", type=float, default=5e-5)
    parser.add_argument("--num_train_epochs", type=float, default=3.0)
    parser.add_argument("--push_to_hub", action="store_true")
    parser.add_argument("--push_to_hub_model_id", default=None)
    return parser.parse_args()


def group_texts(examples, block_size):
    concatenated = {k: sum(examples[k], []) for k in examples.keys()}
    total_length = (len(concatenated["input_ids"]) // block_size) * block_size
    result = {
        k: [t[i : i + block_size] for i in range(0, total_length, block_size)] for k, t in concatenated.items()
    }
    result["labels"] = result["input_ids"].copy()
    return result


def main():
    args = parse_args()
    training_args = TrainingArguments(
        output_dir=args.output_dir,
        per_device_train_batch_size=args.per_device_train_batch_size,
        learning_rate=args.learning_rate,
        num_train_epochs=args.num_train_epochs,
        push_to_hub_model_id=args.push_to_hub_model_id,
    )

    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path)

    raw = load_dataset(args.dataset_name, args.dataset_config_name)
    tokenized = raw.map(lambda b: tokenizer(b["text"]), batched=True, remove_columns=["text"])
    lm_datasets = tokenized.map(lambda b: group_texts(b, args.block_size), batched=True)

    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=lm_datasets["train"],
        tokenizer=tokenizer,
        data_collator=default_data_collator,
    )
    train_result = trainer.train()
    metrics = train_result.metrics
    trainer.log_metrics("train", metrics)

    if args.push_to_hub:
        trainer.push_to_hub(commit_message=f"train loss {metrics['train_loss']:.3f}, ppl {math.exp(metrics['train_loss']):.1f}")


def _mp_fn(index):
    # For xla_spawn (TPUs)
    main()


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=(), nprocs=8)
