"""Fixed twin of lightning_pose_val_metrics_logged_on_global_rank_zero: the metrics logged on rank 0
only are logged with rank_zero_only=True.
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
            self._log_metrics(results, "val", prefix=None, rank_zero_only=True)
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

    def _log_metrics(self, metric_dict, train_val, prefix="loss", rank_zero_only=False):
        for name, value in metric_dict.items():
            log_str = f"{name}/{train_val}"
            if prefix:
                log_str = f"{prefix}/{log_str}"
            self.log(log_str, value, rank_zero_only=rank_zero_only)


def main(cfg):
    import pytorch_lightning as pl
    from pytorch_lightning.callbacks import ModelCheckpoint

    model = CenterGroup(cfg.model.bu_model, cfg.model.group_module, cfg.train_cfg, cfg.test_cfg)
    ckpt = ModelCheckpoint(monitor="AP/val", mode="max", save_last=True)
    trainer = pl.Trainer(gpus=cfg.gpus, strategy="ddp", max_epochs=cfg.total_epochs, callbacks=[ckpt], precision=16)
    trainer.fit(model, cfg.train_loader, cfg.val_loader)
