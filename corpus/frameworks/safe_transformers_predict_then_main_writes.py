"""The run_glue.py form: every process predicts; only trainer.is_world_process_zero() writes."""
from transformers import Trainer, TrainingArguments


def write_predictions(trainer: Trainer, test_dataset, path: str) -> None:
    predictions = trainer.predict(test_dataset).predictions.argmax(-1)
    if trainer.is_world_process_zero():
        with open(path, "w") as writer:
            writer.write("\n".join(str(p) for p in predictions))


def main(model, training_args: TrainingArguments, train_dataset, test_dataset) -> None:
    trainer = Trainer(model=model, args=training_args, train_dataset=train_dataset)
    trainer.train()
    write_predictions(trainer, test_dataset, "predictions.txt")
