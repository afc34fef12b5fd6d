"""A helper returns on every process that is not the main one (trainer_utils.is_main_process on the
local rank) before predicting; Trainer.predict gathers from every process."""
from transformers import Trainer, TrainingArguments
from transformers.trainer_utils import is_main_process


def write_predictions(trainer: Trainer, training_args: TrainingArguments, test_dataset, path: str) -> None:
    if not is_main_process(training_args.local_rank):
        return  # expect: RC102
    predictions = trainer.predict(test_dataset).predictions.argmax(-1)
    with open(path, "w") as writer:
        writer.write("\n".join(str(p) for p in predictions))


def main(model, training_args: TrainingArguments, train_dataset, test_dataset) -> None:
    trainer = Trainer(model=model, args=training_args, train_dataset=train_dataset)
    trainer.train()
    write_predictions(trainer, training_args, test_dataset, "predictions.txt")
