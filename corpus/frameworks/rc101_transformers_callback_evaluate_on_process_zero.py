"""A TrainerCallback holding the Trainer runs an extra evaluation (on a second dataset) only where
state.is_world_process_zero: Trainer.evaluate is collective, the other processes never call it."""
from transformers import Trainer, TrainerCallback


class ExtraEvalCallback(TrainerCallback):
    def __init__(self, trainer: Trainer, extra_dataset) -> None:
        self.trainer = trainer
        self.extra_dataset = extra_dataset

    def on_epoch_end(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            self.trainer.evaluate(eval_dataset=self.extra_dataset, metric_key_prefix="extra")  # expect: RC101
        return control


def main(model, args, train_dataset, extra_dataset) -> None:
    trainer = Trainer(model=model, args=args, train_dataset=train_dataset)
    trainer.add_callback(ExtraEvalCallback(trainer, extra_dataset))
    trainer.train()
