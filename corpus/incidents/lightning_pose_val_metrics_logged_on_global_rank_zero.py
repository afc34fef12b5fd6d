"""Bottom-up multi-person pose estimation (CenterGroup) trained with PyTorch Lightning on top of
MMPose: validation predictions are collected from every GPU, then rank 0 runs the COCO evaluation and
logs the resulting metrics.

Thread: https://github.com/dvl-tum/center-group/pull/2 ("Fix validation logging when using multiple GPUs")
Project: dvl-tum/center-group
What hung: `validation_epoch_end` evaluated and logged the metrics only under
`if self.global_rank == 0:`, through a helper that calls `self.log(name, value)` for every metric.
The PR author: "Since we only log when the `self.world_rank == 0`, we have to set the
`rank_zero_only=True` param in `self.log()`. Otherwise, we are getting a deadlock as pytorch
lightning is waiting for the other processes to log as well." (Lightning 1.5-era; the exact
synchronisation point inside Lightning is the PR author's account, not a maintainer's.)
Fix (the merged PR): pass `rank_zero_only=True` through the helper to `self.log` for the metrics
logged on rank 0 only.
Expected rankcheck finding: RC101 on the `self._log_metrics(...)` call under `self.global_rank == 0`,
which reaches `self.log` on one rank only.
"""
import copy

import torch
from mmpose.apis.test import collect_results_gpu
from mmpose.models import builder
from pytorch_lightning import LightningModule


class CenterGroup(LightningModule):
    def __init__(self, bu_model: dict, group_module: dict, train_cfg: dict, test_cfg: dict):
        super().__init__()
        self.bu_model = builder.build_posenet(bu_model)
        from centergroup_modules import GroupingModel  # project-local grouping transformer

        self.group_model = GroupingModel(**group_module)
        self.train_cfg = train_cfg
        self.test_cfg = test_cfg
        self.save_hyperparameters()

    def forward_test(self, batch):
        batch = copy.deepcopy(batch)
        heatmaps, tags = self.bu_model(batch["img"].float())[1:]
        preds = self.group_model.decode(heatmaps, tags, self.test_cfg)
        return {"preds": preds["poses"], "scores": preds["scores"], "image_paths": [batch["img_metas"]["image_file"]]}

    def training_step(self, batch, batch_idx):
        heatmaps, tags = self.bu_model(batch["img"])[1:]
        losses = self.group_model.loss(heatmaps, tags, batch["targets"], batch["masks"], self.train_cfg["group_loss"])
        self._log_metrics(losses, "train", prefix="loss")
        return losses["overall"]

    def validation_step(self, batch, batch_idx):
        return self.forward_test(batch)

    def validation_epoch_end(self, outputs):
        dataset = self.trainer.val_dataloaders[0].dataset
        all_out = collect_results_gpu(outputs, len(dataset))
        if self.global_rank == 0:
            results = dataset.evaluate(all_out, self.logger.root_dir)
            self._log_metrics(results, "val", prefix=None)  # expect: RC101
            return results

    def test_step(self, *args, **kwargs):
        return self.validation_step(*args, **kwargs)

    def test_epoch_end(self, outputs):
        return self.validation_epoch_end(outputs)

    def configure_optimizers(self):
        optim_class = getattr(torch.optim, self.train_cfg["optimizer_"]["type"])
        optimizer = optim_class(
            [
                {"params": self.bu_model.parameters(), "lr": self.train_cfg["optimizer_"]["bu_lr"]},
                {"params": self.group_model.parameters(), "lr": self.train_cfg["optimizer_"]["lr"]},
            ]
        )
        scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=self.train_cfg["lr_scheduler_"]["milestones"])
        return [optimizer], [scheduler]

    def _log_metrics(self, metric_dict, train_val, prefix="loss"):
        for name, value in metric_dict.items():
            log_str = f"{name}/{train_val}"
            if prefix:
                log_str = f"{prefix}/{log_str}"
            self.log(log_str, value)


def main(cfg):
    import pytorch_lightning as pl
    from pytorch_lightning.callbacks import ModelCheckpoint

    model = CenterGroup(cfg.model.bu_model, cfg.model.group_module, cfg.train_cfg, cfg.test_cfg)
    ckpt = ModelCheckpoint(monitor="AP/val", mode="max", save_last=True)
    trainer = pl.Trainer(gpus=cfg.gpus, strategy="ddp", max_epochs=cfg.total_epochs, callbacks=[ckpt], precision=16)
    trainer.fit(model, cfg.train_loader, cfg.val_loader)
