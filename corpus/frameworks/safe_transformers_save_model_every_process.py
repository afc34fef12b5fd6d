"""The fix: save_model on every process (it writes only where should_save holds); the tokenizer is
plain file output for process zero."""
from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments


def finetune(train_dataset, output_dir: str) -> None:
    tokenizer = AutoTokenizer.from_pretrained("meta-llama/Llama-3.2-1B")
    model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B")
    args = TrainingArguments(output_dir=output_dir, fsdp="full_shard auto_wrap", bf16=True)
    trainer = Trainer(model=model, args=args, train_dataset=train_dataset)
    trainer.train()
    trainer.save_model(output_dir)
    if args.should_save:
        tokenizer.save_pretrained(output_dir)
