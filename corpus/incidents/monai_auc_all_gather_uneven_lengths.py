"""Distributed validation of a MONAI classification workflow: the validation set is split without
padding (so no sample is scored twice) and the ROC-AUC handler all-gathers every rank's
predictions with ignite's `idist.all_gather` before computing the AUC.

Thread: https://github.com/Project-MONAI/MONAI/issues/1531 ("AUC metric can't work in distributed validation if data length is different in ranks")
Project: Project-MONAI/MONAI (ignite-based handlers)
What hung: "If the `predictions` and `labels` in different ranks have different lengths, the AUC
metric will hang up when doing `all_gather` in ignite." An all-gather of tensors needs the same
shape on every rank; with an unpadded split the ranks hold different numbers of samples.
Fix (MONAI maintainers): gather through a helper that first all-gathers the lengths, pads every
rank's tensor to the longest, gathers, and trims (`evenly_divisible_all_gather`).
Expected rankcheck finding: RC104 on the `idist.all_gather(...)` calls, whose tensors have a
per-rank length.
"""
import ignite.distributed as idist
import torch
from ignite.engine import Engine, Events
from monai.data import DataLoader, DistributedSampler
from sklearn.metrics import roc_auc_score


class DistributedROCAUC:
    def __init__(self):
        self._preds = []
        self._labels = []

    def reset(self):
        self._preds.clear()
        self._labels.clear()

    def update(self, y_pred: torch.Tensor, y: torch.Tensor):
        self._preds.append(y_pred.detach().sigmoid().flatten())
        self._labels.append(y.detach().flatten())

    def compute(self) -> float:
        preds = torch.cat(self._preds)
        labels = torch.cat(self._labels)
        all_preds = idist.all_gather(preds)  # expect: RC104
        all_labels = idist.all_gather(labels)  # expect: RC104
        return float(roc_auc_score(all_labels.cpu().numpy(), all_preds.cpu().numpy()))


def build_evaluator(net, val_ds, device, batch_size: int = 8) -> Engine:
    sampler = DistributedSampler(val_ds, even_divisible=False, shuffle=False)
    loader = DataLoader(val_ds, batch_size=batch_size, sampler=sampler, num_workers=4)
    auc = DistributedROCAUC()

    def step(engine, batch):
        net.eval()
        with torch.no_grad():
            images, labels = batch["image"].to(device), batch["label"].to(device)
            logits = net(images)
        auc.update(logits, labels)

    evaluator = Engine(step)
    evaluator.add_event_handler(Events.EPOCH_STARTED, lambda engine: auc.reset())

    @evaluator.on(Events.EPOCH_COMPLETED)
    def log_auc(engine):
        engine.state.metrics["val_auc"] = auc.compute()
        if idist.get_rank() == 0:
            print(f"validation AUC {engine.state.metrics['val_auc']:.4f}")

    evaluator.loader = loader
    return evaluator
