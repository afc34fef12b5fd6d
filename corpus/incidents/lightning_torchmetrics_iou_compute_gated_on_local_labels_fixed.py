"""Safe twin of lightning_torchmetrics_iou_compute_gated_on_local_labels: the IoU and mAP metrics are
computed on every rank, whatever the local rank accumulated (the issue's fix).

Thread: https://github.com/weecology/DeepForest/issues/1407
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
        metrics.update(self.iou_metric.compute())
        output = self.mAP_metric.compute()
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
