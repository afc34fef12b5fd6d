"""A trimmed copy of `pytorch_lightning.metrics` as of Lightning 0.9/0.10 (autumn 2020): the TensorMetric base
whose call reduces the metric's output over the DDP processes, the functional confusion matrix and the
ConfusionMatrix metric class, which now takes `num_classes` and normalizes after the DDP sync."""
from .classification import Accuracy, ConfusionMatrix

__all__ = ["Accuracy", "ConfusionMatrix"]
