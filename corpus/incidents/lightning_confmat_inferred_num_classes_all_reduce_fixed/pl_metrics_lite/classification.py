"""Class interface of the classification metrics (pytorch_lightning/metrics/classification.py, 0.9.x)."""
from typing import Any, Optional

import torch

from .functional import _confmat_normalize, accuracy, confusion_matrix
from .metric import TensorMetric


class Accuracy(TensorMetric):
    def __init__(self, num_classes: Optional[int] = None, reduce_group: Any = None, reduce_op: Any = None):
        super().__init__(name="accuracy", reduce_group=reduce_group, reduce_op=reduce_op)
        self.num_classes = num_classes

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return accuracy(pred=pred, target=target, num_classes=self.num_classes)


class ConfusionMatrix(TensorMetric):
    """Computes the confusion matrix C where each entry C_{i,j} is the number of observations in
    group i that were predicted in group j."""

    def __init__(self, num_classes: Optional[int] = None, normalize: bool = False, reduce_group: Any = None,
                 reduce_op: Any = None):
        super().__init__(name="confusion_matrix", reduce_group=reduce_group, reduce_op=reduce_op)
        self.normalize = normalize
        self.num_classes = num_classes

    def forward(self, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return confusion_matrix(pred=pred, target=target,
                                normalize=False,  # we normalize after ddp sync
                                num_classes=self.num_classes)

    def compute(self, output: torch.Tensor) -> torch.Tensor:
        """Confusion matrix normalization needs to happen after the DDP sync."""
        return _confmat_normalize(output) if self.normalize else output
