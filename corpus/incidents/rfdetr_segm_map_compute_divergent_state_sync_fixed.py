"""Safe twin of rfdetr_segm_map_compute_divergent_state_sync.py: the metric does not sync
itself (`sync_on_compute=False`); every rank hands its whole local state to one
`all_gather_object` issued unconditionally by every rank, the states are merged in rank order,
and `compute()` then runs locally on the merged state.

Thread: https://github.com/roboflow/rf-detr/pull/1085
"""
import lightning.pytorch as pl
import torch
import torch.distributed as dist
from torchmetrics.detection import MeanAveragePrecision


def to_metric_format(outputs, targets, mask_threshold=0.5):
    preds, gts = [], []
    for out, tgt in zip(outputs, targets):
        keep = out["scores"] > 0.0
        preds.append({
            "boxes": out["boxes"][keep],
            "scores": out["scores"][keep],
            "labels": out["labels"][keep],
            "masks": (out["masks"][keep] > mask_threshold).squeeze(1),
        })
        gts.append({"boxes": tgt["boxes"], "labels": tgt["labels"], "masks": tgt["masks"].bool()})
    return preds, gts


class COCOEvalCallback(pl.Callback):
    def __init__(self, class_names, segmentation=True):
        super().__init__()
        self.class_names = class_names
        self.map_metric = MeanAveragePrecision(
            iou_type=("bbox", "segm") if segmentation else "bbox",
            class_metrics=True,
            backend="faster_coco_eval",
            sync_on_compute=False,
        )
        self._state_names = list(self.map_metric._defaults.keys())

    def merge_distributed_state(self):
        """One rank-symmetric collective: every rank sends its full state, whatever it holds."""
        if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
            return
        local = {k: [t.cpu() if torch.is_tensor(t) else t for t in getattr(self.map_metric, k)]
                 for k in self._state_names}
        gathered = [None] * dist.get_world_size()
        dist.all_gather_object(gathered, local)
        for k in self._state_names:
            merged = []
            for rank_state in gathered:  # fixed rank order
                merged.extend(rank_state[k])
            setattr(self.map_metric, k, merged)

    def on_validation_epoch_start(self, trainer, pl_module):
        self.map_metric.reset()

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        samples, targets = batch
        preds, gts = to_metric_format(outputs["results"], targets)
        self.map_metric.update(preds, gts)

    def on_validation_epoch_end(self, trainer, pl_module):
        self.merge_distributed_state()
        results = self.map_metric.compute()
        pl_module.log("val/mAP_50_95", results["segm_map"] if "segm_map" in results else results["map"],
                      sync_dist=False, rank_zero_only=True)
        pl_module.log("val/mAP_50", results.get("segm_map_50", results.get("map_50")),
                      sync_dist=False, rank_zero_only=True)
        if trainer.is_global_zero:
            for name, ap in zip(self.class_names, results.get("segm_map_per_class", [])):
                print(f"{name}: AP={float(ap):.3f}")
        self.map_metric.reset()


def build_trainer(cfg, class_names):
    return pl.Trainer(
        accelerator="gpu",
        devices=cfg.devices,
        strategy="ddp_find_unused_parameters_true",
        max_epochs=cfg.epochs,
        precision="16-mixed",
        callbacks=[COCOEvalCallback(class_names, segmentation=True)],
        check_val_every_n_epoch=1,
    )


def train(cfg, module, datamodule, class_names):
    trainer = build_trainer(cfg, class_names)
    trainer.fit(module, datamodule=datamodule)
    return trainer
