"""Deep multiple-instance learning module (histopathology/models/deepmil.py): a bag of tile features per
slide, gated-attention pooling, a slide-level classifier, torchmetrics per stage, and the outputs
handler called at the end of the validation and test epochs."""
from typing import Dict, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from pytorch_lightning import LightningModule
from torchmetrics import AUROC, Accuracy, CohenKappa, ConfusionMatrix

from ..utils.naming import MetricsKey, ModelKey, ResultsKey
from ..utils.output_utils import BatchResultsType, DeepMILOutputsHandler, EpochResultsType


class GatedAttentionLayer(nn.Module):
    def __init__(self, input_dims: int, hidden_dims: int = 128):
        super().__init__()
        self.attention_v = nn.Sequential(nn.Linear(input_dims, hidden_dims), nn.Tanh())
        self.attention_u = nn.Sequential(nn.Linear(input_dims, hidden_dims), nn.Sigmoid())
        self.attention_w = nn.Linear(hidden_dims, 1)

    def forward(self, features: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        a = self.attention_w(self.attention_v(features) * self.attention_u(features))  # (n_tiles, 1)
        a = F.softmax(a.transpose(0, 1), dim=1)  # (1, n_tiles)
        return a, a @ features


class DeepMILModule(LightningModule):
    def __init__(self, n_classes: int, feature_dims: int = 512, lr: float = 3e-4, weight_decay: float = 1e-4,
                 class_names: Optional[list] = None, outputs_handler: Optional[DeepMILOutputsHandler] = None):
        super().__init__()
        self.n_classes = n_classes
        self.lr = lr
        self.weight_decay = weight_decay
        self.class_names = class_names or [str(i) for i in range(n_classes)]
        self.outputs_handler = outputs_handler
        self.save_hyperparameters(ignore=["outputs_handler"])
        self.aggregation_fn = GatedAttentionLayer(feature_dims)
        self.classifier_fn = nn.Linear(feature_dims, n_classes)
        self.train_metrics = self.get_metrics()
        self.val_metrics = self.get_metrics()
        self.test_metrics = self.get_metrics()

    def get_metrics(self) -> nn.ModuleDict:
        return nn.ModuleDict({
            MetricsKey.ACC: Accuracy(num_classes=self.n_classes),
            MetricsKey.ACC_MACRO: Accuracy(num_classes=self.n_classes, average="macro"),
            MetricsKey.AUROC: AUROC(num_classes=self.n_classes),
            # Quadratic Weighted Kappa, as in the PANDA challenge
            MetricsKey.COHENKAPPA: CohenKappa(num_classes=self.n_classes, weights="quadratic"),
            MetricsKey.CONF_MATRIX: ConfusionMatrix(num_classes=self.n_classes),
        })

    def get_metrics_dict(self, stage: ModelKey) -> nn.ModuleDict:
        return {ModelKey.TRAIN: self.train_metrics, ModelKey.VAL: self.val_metrics,
                ModelKey.TEST: self.test_metrics}[stage]

    def log_metrics(self, stage: ModelKey) -> None:
        for metric_name, metric_object in self.get_metrics_dict(stage).items():
            if metric_name == MetricsKey.CONF_MATRIX:
                metric_value = metric_object.compute()
                metric_value_n = metric_value / metric_value.sum(axis=1, keepdims=True)
                for i in range(metric_value_n.shape[0]):
                    self.log(f"{stage.value}/{self.class_names[i]}", metric_value_n[i, i], on_epoch=True,
                             sync_dist=False)
            else:
                self.log(f"{stage.value}/{metric_name}", metric_object, on_epoch=True)

    def forward(self, features: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        attentions, bag_features = self.aggregation_fn(features)
        return self.classifier_fn(bag_features), attentions

    def _shared_step(self, batch: Dict, batch_idx: int, stage: ModelKey) -> BatchResultsType:
        bag_logits, bag_attn, bag_labels = [], [], []
        for features, label in zip(batch["features"], batch["label"]):
            logits, attn = self(features)
            bag_logits.append(logits)
            bag_attn.append(attn.detach().cpu())
            bag_labels.append(label)
        logits = torch.cat(bag_logits)
        labels = torch.stack(bag_labels).long()
        loss = F.cross_entropy(logits, labels)
        probs = F.softmax(logits, dim=1)
        preds = probs.argmax(dim=1)
        for metric_object in self.get_metrics_dict(stage).values():
            metric_object.update(probs, labels)
        return {ResultsKey.LOSS: loss, ResultsKey.PROB: probs.detach(), ResultsKey.PRED_LABEL: preds.detach(),
                ResultsKey.TRUE_LABEL: labels.detach(), ResultsKey.SLIDE_ID: batch["slide_id"],
                ResultsKey.BAG_ATTN: bag_attn}

    def training_step(self, batch: Dict, batch_idx: int) -> torch.Tensor:
        result = self._shared_step(batch, batch_idx, ModelKey.TRAIN)
        self.log("train/loss", result[ResultsKey.LOSS], on_epoch=True, on_step=True, sync_dist=True)
        return result[ResultsKey.LOSS]

    def validation_step(self, batch: Dict, batch_idx: int) -> BatchResultsType:
        result = self._shared_step(batch, batch_idx, ModelKey.VAL)
        self.log("val/loss", result[ResultsKey.LOSS], on_epoch=True, on_step=False, sync_dist=True)
        return {k: v for k, v in result.items() if k != ResultsKey.BAG_ATTN}

    def test_step(self, batch: Dict, batch_idx: int) -> BatchResultsType:
        result = self._shared_step(batch, batch_idx, ModelKey.TEST)
        self.log("test/loss", result[ResultsKey.LOSS], on_epoch=True, on_step=False, sync_dist=True)
        return {k: v for k, v in result.items() if k != ResultsKey.BAG_ATTN}

    def training_epoch_end(self, outputs) -> None:
        self.log_metrics(ModelKey.TRAIN)

    def validation_epoch_end(self, epoch_results: EpochResultsType) -> None:
        self.log_metrics(ModelKey.VAL)
        if self.outputs_handler:
            self.outputs_handler.save_validation_outputs(
                epoch_results=epoch_results,
                metrics_dict=self.get_metrics_dict(ModelKey.VAL),
                epoch=self.current_epoch,
                is_global_rank_zero=self.global_rank == 0,
            )

    def test_epoch_end(self, epoch_results: EpochResultsType) -> None:
        self.log_metrics(ModelKey.TEST)
        if self.outputs_handler:
            self.outputs_handler.save_test_outputs(
                epoch_results=epoch_results,
                metrics_dict=self.get_metrics_dict(ModelKey.TEST),
                is_global_rank_zero=self.global_rank == 0,
            )

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr, weight_decay=self.weight_decay)
