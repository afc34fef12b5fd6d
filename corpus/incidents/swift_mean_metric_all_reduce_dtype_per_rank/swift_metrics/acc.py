"""Token- and sequence-level accuracy, as ms-swift's `swift/metrics/acc.py` computes it."""
from typing import Dict, List, Literal

import numpy as np
import torch


def compute_acc(preds, labels, *, acc_strategy: Literal["token", "seq"] = "token",
                is_encoder_decoder: bool = False) -> Dict[str, List]:
    if isinstance(preds, torch.Tensor):
        if torch.is_floating_point(labels):
            return {}
        preds = preds.cpu().numpy()
        labels = labels.cpu().numpy()
    if preds.ndim >= 2 and not is_encoder_decoder:
        labels = labels[..., 1:]
        preds = preds[..., :-1]
    if np.issubdtype(labels.dtype, np.floating) or preds.shape != labels.shape:
        return {}

    masks = labels != -100
    if acc_strategy == "token" or preds.ndim == 1:
        acc_list = (preds[masks] == labels[masks]).tolist()  # Python bools
    else:
        # one numpy.bool_ per sequence
        acc_list = [np.all(preds[i, m] == labels[i, m]) for i, m in enumerate(masks)]
    return {f"{acc_strategy}_acc" if preds.ndim >= 2 else "acc": acc_list}
