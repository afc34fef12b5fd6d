"""The final save is guarded by TrainingArguments.should_save; with FSDP or DeepSpeed, Trainer.save_model
gathers the state dict on every process, so process zero waits there alone."""
from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments


def finetune(train_dataset, output_dir: str) -> None:
    tokenizer = AutoTokenizer.from_pretrained("meta-llama/Llama-3.2-1B")
    model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B")
    args = TrainingArguments(output_dir=output_dir, fsdp="full_shard auto_wrap", bf16=True)
    trainer = Trainer(model=model, args=args, train_dataset=train_dataset)
    trainer.train()
    if args.should_save:
        trainer.save_model(output_dir)  # expect: RC101
        tokenizer.save_pretrained(output_dir)
