"""Fine-tuning a sequence classifier on a GLUE task with the trainer, launched with
`python -m torch.distributed.launch --nproc_per_node 8 run_glue.py --task_name mnli ...`."""
import argparse
import os

import torch
import torch.distributed as dist
from datasets import load_dataset
from transformers import AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding

from trainer_lite.trainer import Trainer


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name_or_path", default="bert-base-cased")
    parser.add_argument("--task_name", default="mnli")
    parser.add_argument("--output_dir", default="/tmp/mnli")
    parser.add_argument("--per_device_train_batch_size", type=int, default=32)
    parser.add_argument("--learning_rate", type=float, default=2e-5)
    parser.add_argument("--num_train_epochs", type=float, default=3.0)
    parser.add_argument("--max_grad_norm", type=float, default=1.0)
    parser.add_argument("--logging_steps", type=int, default=500)
    parser.add_argument("--save_steps", type=int, default=500)
    parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", -1)))
    args = parser.parse_args()
    if args.local_rank != -1:
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend="nccl")
        args.device = torch.device("cuda", args.local_rank)
    else:
        args.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return args


def main():
    args = parse_args()
    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    model = AutoModelForSequenceClassification.from_pretrained(args.model_name_or_path, num_labels=3)
    raw = load_dataset("glue", args.task_name, split="train")
    train_dataset = raw.map(lambda ex: tokenizer(ex["premise"], ex["hypothesis"], truncation=True, max_length=128),
                            batched=True, remove_columns=["premise", "hypothesis", "idx"])
    train_dataset = train_dataset.rename_column("label", "labels")
    trainer = Trainer(model, args, train_dataset, DataCollatorWithPadding(tokenizer), tokenizer=tokenizer)
    trainer.train()
    trainer.save_model()


if __name__ == "__main__":
    main()
