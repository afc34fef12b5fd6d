"""OneFormer semantic-segmentation Lightning module of a TAO-style toolkit, validated on several
datasets at once (one validation dataloader per dataset) and trained with DDP
(`Trainer(strategy="ddp", devices=8)`). Per-dataset and combined mIoU are computed at the end of
the validation epoch from the statistics each validation step collected, keyed by dataloader.

Safe twin of tao_oneformer_val_metrics_per_rank_dataloader_keys: as merged in tao-pytorch#74, the
outputs are re-keyed by every configured dataloader index (empty where this rank saw nothing), so
every rank reduces the same dataloaders in the same order; the sufficient statistics are summed
across ranks explicitly and the already-global metrics are logged with `sync_dist=False`.

Thread: https://github.com/NVIDIA-TAO/tao-pytorch/pull/74
"""
import numpy as np
import pytorch_lightning as pl
import torch
import torch.distributed as dist
import torch.nn.functional as F


def distributed_sum_array(array, device):
    """Sum a numpy array over all ranks (identity without a process group)."""
    tensor = torch.as_tensor(array, dtype=torch.float64, device=device)
    if dist.is_available() and dist.is_initialized():
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
    return tensor.cpu().numpy()


def summarize_semantic_iou(area_intersect, area_union, area_label):
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = area_intersect / area_union
        all_acc = area_intersect.sum() / area_label.sum() if area_label.sum() > 0 else 0.0
    miou = float(np.nanmean(iou)) if np.isfinite(iou).any() else 0.0
    return {"mIoU": miou, "all_acc": float(all_acc)}


def intersect_and_union(pred, label, num_classes, ignore_index):
    mask = label != ignore_index
    pred, label = pred[mask], label[mask]
    intersect = pred[pred == label]
    area_intersect = np.bincount(intersect, minlength=num_classes)
    area_pred = np.bincount(pred, minlength=num_classes)
    area_label = np.bincount(label, minlength=num_classes)
    return area_intersect, area_pred + area_label - area_intersect, area_label


class OneFormerPlModel(pl.LightningModule):
    def __init__(self, model, num_classes, ignore_index=255, lr=1e-4):
        super().__init__()
        self.model = model
        self.num_classes = num_classes
        self.ignore_index = ignore_index
        self.lr = lr
        self.validation_step_outputs = {}

    def _get_val_dataset_names(self):
        names = getattr(self.trainer.datamodule, "val_dataset_names", None)
        return names if names and len(names) > 1 else None

    def training_step(self, batch, batch_idx):
        logits = self.model(batch["images"])
        loss = F.cross_entropy(logits, batch["sem_segs"], ignore_index=self.ignore_index)
        self.log("train_loss", loss, on_step=True, prog_bar=True)
        return loss

    def on_validation_epoch_start(self):
        self.validation_step_outputs = {}

    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        pred = self.model(batch["images"]).argmax(dim=1).cpu().numpy()
        area_intersect, area_union, area_label = intersect_and_union(
            pred, batch["sem_segs"].cpu().numpy(), self.num_classes, self.ignore_index)
        metrics = {"area_intersect": area_intersect, "area_union": area_union, "area_label": area_label}
        self.validation_step_outputs.setdefault(dataloader_idx, []).append(metrics)
        return metrics

    def _global_semantic_stats(self, outputs):
        local = np.zeros((3, self.num_classes), dtype=np.float64)
        for out in outputs:
            local[0] += out["area_intersect"]
            local[1] += out["area_union"]
            local[2] += out["area_label"]
        reduced = distributed_sum_array(local, device=self.device)
        return reduced[0], reduced[1], reduced[2]

    def _compute_and_log_metrics(self, outputs_by_dl, dataset_names, prefix=""):
        # Lightning can invoke this hook on a rank that received no samples. Still enter every
        # configured dataloader's collective with zero local statistics so that ranks cannot
        # diverge or deadlock.
        expected_indices = range(len(dataset_names)) if dataset_names is not None else (0,)
        outputs_by_dl = {index: outputs_by_dl.get(index, []) for index in expected_indices}
        multi = len(outputs_by_dl) > 1
        combined = np.zeros((3, self.num_classes), dtype=np.float64)
        for dl_idx in sorted(outputs_by_dl.keys()):
            stats = self._global_semantic_stats(outputs_by_dl[dl_idx])
            combined += np.stack(stats)
            if multi:
                summary = summarize_semantic_iou(*stats)
                self.log(f"{prefix}mIoU/{dataset_names[dl_idx]}", summary["mIoU"], on_step=False, on_epoch=True,
                         sync_dist=False, add_dataloader_idx=False)
        summary = summarize_semantic_iou(combined[0], combined[1], combined[2])
        self.log(f"{prefix}mIoU", summary["mIoU"], on_step=False, on_epoch=True, prog_bar=True, sync_dist=False,
                 add_dataloader_idx=False)
        self.log(f"{prefix}all_acc", summary["all_acc"], on_step=False, on_epoch=True, sync_dist=False,
                 add_dataloader_idx=False)

    def on_validation_epoch_end(self):
        self._compute_and_log_metrics(self.validation_step_outputs, self._get_val_dataset_names())
        self.validation_step_outputs.clear()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr, weight_decay=0.05)
