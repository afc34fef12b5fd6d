"""The fix: the callback evaluates on every process; only the summary line is process zero's."""
from transformers import Trainer, TrainerCallback


class ExtraEvalCallback(TrainerCallback):
    def __init__(self, trainer: Trainer, extra_dataset) -> None:
        self.trainer = trainer
        self.extra_dataset = extra_dataset

    def on_epoch_end(self, args, state, control, **kwargs):
        metrics = self.trainer.evaluate(eval_dataset=self.extra_dataset, metric_key_prefix="extra")
        if state.is_world_process_zero:
            print(f"epoch {state.epoch}: {metrics}")
        return control


def main(model, args, train_dataset, extra_dataset) -> None:
    trainer = Trainer(model=model, args=args, train_dataset=train_dataset)
    trainer.add_callback(ExtraEvalCallback(trainer, extra_dataset))
    trainer.train()
