"""A fine-tuning script trains with the HF Trainer and evaluates only on world process zero:
Trainer.evaluate gathers predictions with accelerator.gather_for_metrics on every process."""
from datasets import load_dataset
from transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer, TrainingArguments


def main() -> None:
    tokenizer = AutoTokenizer.from_pretrained("bert-base-cased")
    dataset = load_dataset("yelp_review_full")
    dataset = dataset.map(lambda ex: tokenizer(ex["text"], padding="max_length", truncation=True), batched=True)
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-cased", num_labels=5)
    training_args = TrainingArguments(output_dir="yelp", eval_strategy="no", per_device_train_batch_size=16)
    trainer = Trainer(model=model, args=training_args, train_dataset=dataset["train"], eval_dataset=dataset["test"])
    trainer.train()
    if trainer.is_world_process_zero():
        metrics = trainer.evaluate()  # expect: RC101
        trainer.save_metrics("eval", metrics)


if __name__ == "__main__":
    main()
