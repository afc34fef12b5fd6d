"""Look-alike of rc103_lightning_log_dict_keys_from_batch_tags: the per-task counters are keyed
by the tasks the configuration lists, created in `__init__`, and the step only adds to them, so
every rank logs the same keys; the values (this rank's counts) differ, which is what the
reduction combines. A dictionary of fixed keys with per-rank values is logged alike too, and so
is what a MetricCollection returns for this rank's masked predictions: one key per metric.
"""
import lightning as L
import torch
from torchmetrics import Accuracy, F1Score, MetricCollection


class MultiTaskModule(L.LightningModule):
    def __init__(self, encoder: torch.nn.Module, tasks):
        super().__init__()
        self.encoder = encoder
        self.tasks = list(tasks)
        self.correct = torch.zeros(len(self.tasks))
        self.total = torch.zeros(len(self.tasks))
        self.batch_metrics = MetricCollection({"acc": Accuracy(task="multiclass", num_classes=8), "f1": F1Score(task="multiclass", num_classes=8)})

    def validation_step(self, batch, batch_idx):
        logits = self.encoder(batch["x"])
        loss = torch.nn.functional.cross_entropy(logits, batch["y"])
        preds = logits.argmax(-1)
        for index, pred, label in zip(batch["task_index"], preds, batch["y"]):
            self.correct[index] += float(pred == label)
            self.total[index] += 1.0
        self.log_dict({"val_loss": loss, "val_batch_acc": (preds == batch["y"]).float().mean()}, sync_dist=True)
        labelled = batch["y"] >= 0
        self.log_dict(self.batch_metrics(preds[labelled], batch["y"][labelled]), sync_dist=True)

    def on_validation_epoch_end(self):
        accuracies = {f"val_acc/{task}": self.correct[i] / self.total[i].clamp(min=1) for i, task in enumerate(self.tasks)}
        self.log_dict(accuracies, sync_dist=True)
        self.correct.zero_()
        self.total.zero_()
