"""Lightning training on Ray Train (TorchTrainer, 2 GPU workers, RayDDPStrategy) with a custom
report callback that checkpoints every third epoch, after the fix of ray#56997: every worker calls
`trainer.save_checkpoint` and reports its checkpoint directory.

Thread: https://github.com/ray-project/ray/issues/56997 ("[Train] [Doc] [Lightning] Trainer
save_checkpoint needs to be called in all train workers"), fixed by
https://github.com/ray-project/ray/pull/65838 ("[docs][train] Save custom Lightning checkpoints on
all ranks", merged)
Project: ray-project/ray (doc/source/train/doc_code/checkpoints.py, the custom Lightning callback)
Fix (the PR, merged): the world-rank test is removed; on checkpoint epochs every worker calls
`trainer.save_checkpoint(...)` (Lightning writes the file on rank 0 and every rank enters its
barrier), creates a `Checkpoint` from its temporary directory for Ray Train to merge and reports it,
then the workers synchronize after reporting, as `RayTrainReportCallback` does.
Expected rankcheck finding: none (safe twin).
"""
import argparse
import os
from tempfile import TemporaryDirectory

import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
import torchvision.transforms as T
from pytorch_lightning.callbacks import Callback
from torch.utils.data import DataLoader, random_split

import ray
import ray.train
from ray.train import Checkpoint, CheckpointConfig, RunConfig, ScalingConfig
from ray.train.lightning import RayDDPStrategy, RayLightningEnvironment, prepare_trainer
from ray.train.torch import TorchTrainer


class CifarClassifier(pl.LightningModule):
    def __init__(self, lr: float = 1e-3, width: int = 64):
        super().__init__()
        self.save_hyperparameters()
        self.features = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.BatchNorm2d(2 * width), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(2 * width, 4 * width, 3, padding=1), nn.BatchNorm2d(4 * width), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Linear(4 * width, 10)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss, on_epoch=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.log("val_loss", F.cross_entropy(logits, y), sync_dist=True)
        self.log("val_acc", (logits.argmax(-1) == y).float().mean(), sync_dist=True)

    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=self.hparams.lr, weight_decay=0.05)
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=self.trainer.max_epochs)
        return [optimizer], [scheduler]


class CifarDataModule(pl.LightningDataModule):
    def __init__(self, data_dir: str, batch_size: int):
        super().__init__()
        self.data_dir = data_dir
        self.batch_size = batch_size
        self.train_tf = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(), T.ToTensor(),
                                   T.Normalize((0.4914, 0.4822, 0.4465), (0.247, 0.243, 0.261))])
        self.eval_tf = T.Compose([T.ToTensor(), T.Normalize((0.4914, 0.4822, 0.4465), (0.247, 0.243, 0.261))])

    def setup(self, stage=None):
        full = torchvision.datasets.CIFAR10(self.data_dir, train=True, download=True, transform=self.train_tf)
        self.train_set, self.val_set = random_split(full, [45000, 5000], generator=torch.Generator().manual_seed(0))

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=self.batch_size, shuffle=True, num_workers=4)

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=self.batch_size, num_workers=4)


class CustomRayTrainReportCallback(Callback):
    """Reports the epoch's metrics to Ray Train, with a Lightning checkpoint every `every_n_epochs`."""

    def __init__(self, every_n_epochs: int = 3):
        super().__init__()
        self.every_n_epochs = every_n_epochs

    def on_train_epoch_end(self, trainer, pl_module):
        should_checkpoint = trainer.current_epoch % self.every_n_epochs == 0

        with TemporaryDirectory() as tmpdir:
            # metrics logged with `self.log(...)` in the LightningModule
            metrics = {k: v.item() for k, v in trainer.callback_metrics.items()}
            metrics["epoch"] = trainer.current_epoch
            metrics["step"] = trainer.global_step

            checkpoint = None
            if should_checkpoint:
                # every worker enters save_checkpoint (and its barrier); Lightning writes on rank 0
                ckpt_path = os.path.join(tmpdir, "checkpoint.ckpt")
                trainer.save_checkpoint(ckpt_path, weights_only=False)
                checkpoint = Checkpoint.from_directory(tmpdir)

            # report to the Ray Train session (every worker must call this)
            ray.train.report(metrics=metrics, checkpoint=checkpoint)

            # every worker has finished reporting before its temporary directory is removed
            trainer.strategy.barrier()


def train_func(config):
    model = CifarClassifier(lr=config["lr"], width=config["width"])
    datamodule = CifarDataModule(config["data_dir"], config["batch_size"])
    trainer = pl.Trainer(
        max_epochs=config["epochs"],
        devices="auto",
        accelerator="auto",
        strategy=RayDDPStrategy(),
        plugins=[RayLightningEnvironment()],
        callbacks=[CustomRayTrainReportCallback(every_n_epochs=config["ckpt_every"])],
        enable_checkpointing=False,
        enable_progress_bar=False,
    )
    trainer = prepare_trainer(trainer)

    checkpoint = ray.train.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as ckpt_dir:
            trainer.fit(model, datamodule=datamodule, ckpt_path=os.path.join(ckpt_dir, "checkpoint.ckpt"))
    else:
        trainer.fit(model, datamodule=datamodule)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num-workers", type=int, default=2)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--ckpt-every", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--data-dir", default="/tmp/cifar10")
    parser.add_argument("--storage-path", default=os.path.expanduser("~/ray_results"))
    args = parser.parse_args()

    ray.init()
    ray_trainer = TorchTrainer(
        train_func,
        train_loop_config={"lr": args.lr, "width": args.width, "epochs": args.epochs,
                           "ckpt_every": args.ckpt_every, "batch_size": args.batch_size,
                           "data_dir": args.data_dir},
        scaling_config=ScalingConfig(num_workers=args.num_workers, use_gpu=True),
        run_config=RunConfig(
            name="cifar_lightning",
            storage_path=args.storage_path,
            checkpoint_config=CheckpointConfig(num_to_keep=2, checkpoint_score_attribute="val_acc",
                                               checkpoint_score_order="max"),
        ),
    )
    result = ray_trainer.fit()
    print(result.metrics, result.checkpoint)


if __name__ == "__main__":
    main()
