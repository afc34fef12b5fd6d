"""Spatio-temporal emulator training (autocast) with Lightning DDP: after `trainer.fit` returns, the
final checkpoint is written with `trainer.save_checkpoint` inside `if trainer.is_global_zero:`.

Thread: https://github.com/alan-turing-institute/autocast/pull/386 ("Fix post-fit NCCL watchdog hang on multi-GPU DDP runs (#381)")
Project: alan-turing-institute/autocast (PyTorch Lightning)
What hung: `trainer.save_checkpoint()` is a collective -- it ends in `strategy.barrier()`, which every
rank must enter. Called only on rank 0, it desynchronised the post-fit collective stream: rank 0's
save_checkpoint barrier paired with the others' `checkpoint-alias-finalize` barrier, then rank 0
posted its own finalize barrier with no partner and waited until the NCCL watchdog (30 min) killed
the job, which SLURM then marked FAILED although training had finished.
Fix (the PR): call `trainer.save_checkpoint()` on every rank (Lightning writes the file on rank 0
only); keep the rank-0-only work (logging, the alias) under `is_global_zero`.
Expected rankcheck finding: RC101 on the guarded `trainer.save_checkpoint(...)`.
(The alias helper and config fields are reconstructed; the PR names run_training and the
`checkpoint-alias-finalize` barrier.)
"""
import argparse
import shutil
from dataclasses import dataclass
from pathlib import Path

import lightning as L
from lightning.pytorch.callbacks import LearningRateMonitor, ModelCheckpoint


@dataclass
class TrainConfig:
    max_epochs: int = 200
    devices: int = 4
    precision: str = "bf16-mixed"
    output_dir: str = "outputs/epd"


def build_trainer(cfg: TrainConfig, output_dir: Path) -> L.Trainer:
    callbacks = [
        ModelCheckpoint(dirpath=output_dir / "checkpoints", filename="best-val-{epoch}", monitor="val_loss", save_last=True),
        LearningRateMonitor(logging_interval="epoch"),
    ]
    return L.Trainer(
        max_epochs=cfg.max_epochs,
        accelerator="gpu",
        devices=cfg.devices,
        strategy="ddp",
        precision=cfg.precision,
        callbacks=callbacks,
        default_root_dir=str(output_dir),
    )


def finalize_checkpoint_alias(trainer: L.Trainer, output_dir: Path) -> None:
    """Point `model.ckpt` at the final checkpoint; everyone waits until rank 0 has done it."""
    if trainer.is_global_zero:
        shutil.copyfile(output_dir / "final.ckpt", output_dir / "model.ckpt")
    trainer.strategy.barrier("checkpoint-alias-finalize")


def run_training(cfg: TrainConfig, model: L.LightningModule, datamodule: L.LightningDataModule) -> Path:
    output_dir = Path(cfg.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    trainer = build_trainer(cfg, output_dir)
    trainer.fit(model, datamodule=datamodule)

    if trainer.is_global_zero:
        final_path = output_dir / "final.ckpt"
        trainer.save_checkpoint(final_path)  # expect: RC101
        print(f"Saved final checkpoint to {final_path}")

    finalize_checkpoint_alias(trainer, output_dir)
    return output_dir / "model.ckpt"


def main(build_model, build_datamodule):
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-epochs", type=int, default=200)
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--output-dir", type=str, default="outputs/epd")
    args = parser.parse_args()
    cfg = TrainConfig(max_epochs=args.max_epochs, devices=args.devices, output_dir=args.output_dir)
    run_training(cfg, build_model(), build_datamodule())
