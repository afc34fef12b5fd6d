"""Functional classification metrics (pytorch_lightning/metrics/functional/classification.py, 0.8.x)."""
from typing import Optional
import warnings

import torch


def get_num_classes(pred: torch.Tensor, target: torch.Tensor, num_classes: Optional[int] = None) -> int:
    """Number of classes: the largest label seen in `pred` or `target`, plus one, unless given."""
    num_target_classes = int(target.max().detach().item() + 1)
    num_pred_classes = int(pred.max().detach().item() + 1)
    num_all_classes = max(num_target_classes, num_pred_classes)
    if num_classes is None:
        num_classes = num_all_classes
    elif num_classes != num_all_classes:
        warnings.warn(f"You have set {num_classes} number of classes if different from"
                      f" predicted ({num_pred_classes}) and target ({num_target_classes}) number of classes")
    return num_classes


def accuracy(pred: torch.Tensor, target: torch.Tensor, num_classes: Optional[int] = None) -> torch.Tensor:
    return (pred == target).float().mean()


def confusion_matrix(pred: torch.Tensor, target: torch.Tensor, normalize: bool = False) -> torch.Tensor:
    """C[i, j] = number of samples of true class i predicted as j; the size comes from the labels."""
    num_classes = get_num_classes(pred, target, None)
    unique_labels = target.view(-1) * num_classes + pred.view(-1)
    bins = torch.bincount(unique_labels, minlength=num_classes ** 2)
    cm = bins.reshape(num_classes, num_classes).squeeze().float()
    if normalize:
        cm = cm / cm.sum(-1)
    return cm
