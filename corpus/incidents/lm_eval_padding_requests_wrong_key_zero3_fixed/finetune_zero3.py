"""Causal-LM fine-tuning with DeepSpeed ZeRO-3 (`deepspeed --num_gpus 8 finetune_zero3.py`),
evaluating BoolQ in-process every `--eval_every` steps (the reporter also ran MMLU)."""
import argparse

import deepspeed
import torch
from datasets import load_dataset
from torch.utils.data import DataLoader, DistributedSampler
from transformers import AutoModelForCausalLM, AutoTokenizer, default_data_collator

from harness.evaluator import evaluate
from harness.tasks import BoolQ
from harness.zero3_lm import DeepSpeedLM


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_name_or_path", default="meta-llama/Llama-2-7b-hf")
    parser.add_argument("--train_file", required=True)
    parser.add_argument("--eval_every", type=int, default=500)
    parser.add_argument("--num_train_epochs", type=int, default=1)
    parser.add_argument("--local_rank", type=int, default=-1)
    parser = deepspeed.add_config_arguments(parser)
    args = parser.parse_args()

    deepspeed.init_distributed()
    tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)
    tokenizer.pad_token = tokenizer.eos_token
    with deepspeed.zero.Init(config_dict_or_path=args.deepspeed_config):
        model = AutoModelForCausalLM.from_pretrained(args.model_name_or_path, torch_dtype=torch.bfloat16)
    engine, _, _, _ = deepspeed.initialize(args=args, model=model, model_parameters=model.parameters())

    train = load_dataset("json", data_files=args.train_file, split="train")
    train = train.map(lambda ex: tokenizer(ex["text"], truncation=True, max_length=1024, padding="max_length"),
                      remove_columns=train.column_names).map(lambda ex: {"labels": ex["input_ids"]})
    loader = DataLoader(train, batch_size=engine.train_micro_batch_size_per_gpu(),
                        sampler=DistributedSampler(train), collate_fn=default_data_collator)
    tasks = [BoolQ()]

    step = 0
    for epoch in range(args.num_train_epochs):
        loader.sampler.set_epoch(epoch)
        for batch in loader:
            loss = engine(**{k: v.to(engine.device) for k, v in batch.items()}).loss
            engine.backward(loss)
            engine.step()
            step += 1
            if step % args.eval_every == 0:
                engine.eval()
                scores = evaluate(DeepSpeedLM(engine, tokenizer), tasks)
                engine.train()
                if torch.distributed.get_rank() == 0:
                    print(f"step {step}: {scores}")


if __name__ == "__main__":
    main()
