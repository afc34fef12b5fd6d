"""The fix (also the ModelCheckpoint way): every rank calls trainer.save_checkpoint."""
import lightning.pytorch as pl


class CheckpointEveryNSteps(pl.Callback):
    def __init__(self, every_n_steps: int, dirpath: str) -> None:
        self.every_n_steps = every_n_steps
        self.dirpath = dirpath

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        step = trainer.global_step
        if step % self.every_n_steps == 0:
            trainer.save_checkpoint(f"{self.dirpath}/step={step}.ckpt")
