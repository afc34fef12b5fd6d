"""Pose-estimation training with Lightning (DDP, trainer_devices > 1): epoch-end visualization
callbacks render predictions on one training and one validation frame, write them to disk and to
wandb on rank 0, then synchronise all ranks with `trainer.strategy.barrier()`.

Thread: https://github.com/talmolab/sleap-nn/pull/437 ("Fix DDP synchronization in training callbacks")
Project: talmolab/sleap-nn
What hung: "training would appear to freeze after each epoch": "Non-rank-0 processes returned
early without reaching the barrier" (the disk visualization callback) and "Rank-0 returned early
(e.g., when wandb logger was None) without reaching the barrier" (the wandb callback), so the
ranks that got to `trainer.strategy.barrier()` waited for ranks that had left the hook.
Fix (the PR): "Changed to `if trainer.is_global_zero:` block pattern" / "Replaced early return
with conditional block", so every rank reaches the barrier.
Expected rankcheck finding: RC102 on the two early `return`s that skip the barrier.
"""
from pathlib import Path
from typing import Callable

import lightning as L
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from lightning.pytorch.callbacks import Callback
from lightning.pytorch.loggers import WandbLogger


def plot_frame(viz_data, title):
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.imshow(viz_data.image, cmap="gray")
    ax.scatter(viz_data.pred_points[:, 0], viz_data.pred_points[:, 1], s=12, c="r", label="pred")
    ax.scatter(viz_data.gt_points[:, 0], viz_data.gt_points[:, 1], s=12, c="g", marker="x", label="gt")
    ax.set_title(title)
    ax.legend(loc="upper right")
    return fig


class UnifiedVizCallback(Callback):
    """Render a train and a val prediction every epoch and save them as PNGs."""

    def __init__(self, train_viz_fn: Callable, val_viz_fn: Callable, viz_folder: str):
        super().__init__()
        self.train_viz_fn, self.val_viz_fn = train_viz_fn, val_viz_fn
        self.viz_folder = Path(viz_folder)

    def on_train_epoch_end(self, trainer, pl_module):
        if not trainer.is_global_zero:
            return  # expect: RC102
        epoch = trainer.current_epoch
        self.viz_folder.mkdir(parents=True, exist_ok=True)
        for split, fn in (("train", self.train_viz_fn), ("validation", self.val_viz_fn)):
            fig = plot_frame(fn(), f"{split} epoch {epoch}")
            fig.savefig(self.viz_folder / f"{split}.{epoch:04d}.png", dpi=100)
            plt.close(fig)
        # Sync all processes after file I/O
        trainer.strategy.barrier()


class WandBVizCallback(Callback):
    """Log the same renders to wandb so the step slider works."""

    def __init__(self, train_viz_fn: Callable, val_viz_fn: Callable):
        super().__init__()
        self.train_viz_fn, self.val_viz_fn = train_viz_fn, val_viz_fn

    @staticmethod
    def _wandb_logger(trainer):
        return next((lg for lg in trainer.loggers if isinstance(lg, WandbLogger)), None)

    def on_train_epoch_end(self, trainer, pl_module):
        if trainer.is_global_zero:
            epoch = trainer.current_epoch
            wandb_logger = self._wandb_logger(trainer)
            if wandb_logger is None:
                return  # expect: RC102
            import wandb

            log = {"epoch": epoch}
            for split, fn in (("train", self.train_viz_fn), ("val", self.val_viz_fn)):
                fig = plot_frame(fn(), f"{split} epoch {epoch}")
                log[f"viz/{split}/predictions"] = wandb.Image(fig)
                plt.close(fig)
            wandb_logger.experiment.log(log, commit=False)
        # Sync all processes
        trainer.strategy.barrier()


def build_trainer(cfg, model_module, train_viz_fn, val_viz_fn):
    callbacks = []
    loggers = []
    if cfg.visualize_preds_during_training:
        callbacks.append(UnifiedVizCallback(train_viz_fn, val_viz_fn, Path(cfg.ckpt_dir) / "viz"))
        callbacks.append(WandBVizCallback(train_viz_fn, val_viz_fn))
    if cfg.use_wandb:
        loggers.append(WandbLogger(project=cfg.wandb_project, name=cfg.run_name))
    return L.Trainer(
        max_epochs=cfg.max_epochs,
        devices=cfg.trainer_devices,
        accelerator="gpu",
        strategy="ddp" if cfg.trainer_devices > 1 else "auto",
        callbacks=callbacks,
        logger=loggers or False,
        default_root_dir=cfg.ckpt_dir,
    )


def train(cfg, model_module, datamodule, train_viz_fn, val_viz_fn):
    trainer = build_trainer(cfg, model_module, train_viz_fn, val_viz_fn)
    trainer.fit(model_module, datamodule=datamodule)
    return trainer
