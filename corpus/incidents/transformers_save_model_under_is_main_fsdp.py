"""LoRA fine-tuning with the Hugging Face Trainer across two Strix Halo boxes, with an `--strategy`
switch between DDP and FSDP; after training, `trainer.save_model()` runs only under `if is_main:`.

Thread: https://github.com/kyuz0/amd-strix-halo-llm-finetuning/pull/6 ("fix(train): call save_model() on all ranks for FSDP compatibility")
Project: kyuz0/amd-strix-halo-llm-finetuning (transformers Trainer)
What hung: "`trainer.save_model()` is currently wrapped in `if is_main:` ... correct for DDP ... but
breaks FSDP: with sharded parameters, `save_model()` triggers a state_dict all-gather -- a
collective that requires participation from every rank." The non-main rank left the script; the
main rank stalled in `_all_gather_flat_param` until the peer's socket closed.
Fix (the PR): "Move `trainer.save_model()` outside the `if is_main:` block ... HF Trainer already
writes only on rank 0 internally."
Expected rankcheck finding: RC101 on the guarded `trainer.save_model(...)`.
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

    if is_main:
        trainer.save_model(args.output_dir)  # expect: RC101
        tokenizer.save_pretrained(args.output_dir)
        print(f"saved adapter to {args.output_dir}")
