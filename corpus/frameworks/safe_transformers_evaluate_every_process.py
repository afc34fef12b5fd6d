"""The run_glue.py form: every process evaluates; Trainer.save_metrics writes on process zero by
itself (it checks is_world_process_zero)."""
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
    metrics = trainer.evaluate()
    trainer.save_metrics("eval", metrics)
    if trainer.is_world_process_zero():
        print(metrics)


if __name__ == "__main__":
    main()
