"""Tree-crown detection (DeepForest) in Lightning DDP: the epoch-end IoU / mAP `compute()` calls are
gated on the local rank's accumulated ground truth, so a rank whose validation shard had only
empty (no-box) images skips them.

Thread: https://github.com/weecology/DeepForest/issues/1407 ("multi-gpu ddp fails if any one rank has all empty validation.")
Project: weecology/DeepForest (PyTorch Lightning + torchmetrics)
What hung: `self.iou_metric.groundtruth_labels` reflects only the local rank's state (only non-empty
targets are `update()`-d). If one rank's shard has zero non-empty images, that rank skips
`iou_metric.compute()` / `mAP_metric.compute()` -- collectives (torchmetrics syncs the states with
`gather_all_tensors` -> all_gather) that every other rank still calls. The watchdog dump showed one
rank exactly one collective behind; the others hung in `Metric.compute()`.
Fix (the issue, by a maintainer; PR #1426): never gate a distributed `compute()` on rank-local state;
call it on every rank (torchmetrics returns an empty-state result).
Expected rankcheck finding: RC101 on each `compute()` under the per-rank-data guard.
(The precision/recall metric of DeepForest is replaced by a torchmetrics BinaryAccuracy on
empty-frame prediction, which every rank computes.)
"""
import lightning as L
import torch
from torchmetrics.classification import BinaryAccuracy
from torchmetrics.detection import IntersectionOverUnion, MeanAveragePrecision


class DeepForestModule(L.LightningModule):
    def __init__(self, model: torch.nn.Module, config: dict):
        super().__init__()
        self.model = model
        self.config = config
        self.iou_metric = IntersectionOverUnion(class_metrics=True, iou_threshold=config["validation"]["iou_threshold"])
        self.mAP_metric = MeanAveragePrecision()
        self.empty_frame_accuracy = BinaryAccuracy()

    def training_step(self, batch, batch_idx):
        _, images, targets = batch
        loss_dict = self.model.forward(images, targets)
        losses = sum(loss_dict.values())
        self.log("train_loss", losses, sync_dist=True)
        return losses

    def validation_step(self, batch, batch_idx):
        _, images, targets = batch
        self.model.eval()
        with torch.no_grad():
            preds = self.model.forward(images)
        non_empty = [i for i, t in enumerate(targets) if t["boxes"].shape[0] > 0]
        if non_empty:
            self.iou_metric.update([preds[i] for i in non_empty], [targets[i] for i in non_empty])
            self.mAP_metric.update([preds[i] for i in non_empty], [targets[i] for i in non_empty])
        predicted_empty = torch.tensor([p["boxes"].shape[0] == 0 for p in preds], device=self.device)
        truly_empty = torch.tensor([t["boxes"].shape[0] == 0 for t in targets], device=self.device)
        self.empty_frame_accuracy.update(predicted_empty.long(), truly_empty.long())

    def _compute_epoch_metrics(self):
        metrics = {}
        if len(self.iou_metric.groundtruth_labels) > 0:
            metrics.update(self.iou_metric.compute())  # expect: RC101
            output = self.mAP_metric.compute()  # expect: RC101
            metrics.update({f"box_{k}": v for k, v in output.items() if v.numel() == 1})
        metrics["empty_frame_accuracy"] = self.empty_frame_accuracy.compute()
        return metrics

    def on_validation_epoch_end(self):
        metrics = self._compute_epoch_metrics()
        self.log_dict({k: v for k, v in metrics.items() if torch.is_tensor(v) and v.numel() == 1})
        self.iou_metric.reset()
        self.mAP_metric.reset()
        self.empty_frame_accuracy.reset()

    def configure_optimizers(self):
        return torch.optim.SGD(self.model.parameters(), lr=self.config["train"]["lr"], momentum=0.9)


def fit(model, config, datamodule):
    trainer = L.Trainer(accelerator="gpu", devices=config["devices"], strategy="ddp", max_epochs=config["train"]["epochs"])
    trainer.fit(DeepForestModule(model, config), datamodule=datamodule)
