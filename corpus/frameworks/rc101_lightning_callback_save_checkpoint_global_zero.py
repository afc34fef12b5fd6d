"""PENDING (hook parameter types): a Lightning Callback saves a checkpoint only on global zero.
Trainer.save_checkpoint ends in strategy.barrier, so global zero hangs; rankcheck cannot see it
because `trainer` is a hook parameter that Lightning (not the project) passes."""
import lightning.pytorch as pl


class CheckpointEveryNSteps(pl.Callback):
    def __init__(self, every_n_steps: int, dirpath: str) -> None:
        self.every_n_steps = every_n_steps
        self.dirpath = dirpath

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        step = trainer.global_step
        if trainer.is_global_zero and step % self.every_n_steps == 0:
            trainer.save_checkpoint(f"{self.dirpath}/step={step}.ckpt")  # expect: RC101
