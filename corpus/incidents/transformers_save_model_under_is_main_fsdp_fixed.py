"""Safe twin of transformers_save_model_under_is_main_fsdp.py: `trainer.save_model()` runs on every
rank (the Trainer itself writes only on the main process); the tokenizer and the message stay
under `is_main`.

Thread: https://github.com/kyuz0/amd-strix-halo-llm-finetuning/pull/6
"""
import argparse
import os

from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling, Trainer, TrainingArguments


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="HuggingFaceTB/SmolLM2-135M-Instruct")
    parser.add_argument("--output_dir", default="out")
    parser.add_argument("--strategy", choices=["ddp", "fsdp"], default="ddp")
    parser.add_argument("--epochs", type=int, default=1)
    return parser.parse_args()


def main(train_dataset):
    args = parse_args()
    is_main = int(os.environ.get("RANK", "0")) == 0
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model)
    model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, target_modules=["q_proj", "v_proj"], task_type="CAUSAL_LM"))

    fsdp_kwargs = {}
    if args.strategy == "fsdp":
        fsdp_kwargs = {"fsdp": "full_shard auto_wrap", "fsdp_config": {"use_orig_params": True}}
    training_args = TrainingArguments(
        output_dir=args.output_dir,
        num_train_epochs=args.epochs,
        per_device_train_batch_size=4,
        gradient_accumulation_steps=4,
        learning_rate=2e-4,
        logging_steps=10,
        save_strategy="no",
        **fsdp_kwargs,
    )
    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset,
        data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False),
    )
    trainer.train()

    trainer.save_model(args.output_dir)
    if is_main:
        tokenizer.save_pretrained(args.output_dir)
        print(f"saved adapter to {args.output_dir}")
