"""OneFormer semantic-segmentation Lightning module of a TAO-style toolkit, validated on several
datasets at once (one validation dataloader per dataset) and trained with DDP
(`Trainer(strategy="ddp", devices=8)`). Per-dataset and combined mIoU are computed at the end of
the validation epoch from the statistics each validation step collected, keyed by dataloader.

Thread: https://github.com/NVIDIA-TAO/tao-pytorch/pull/74 ("[TAO-0000][Bugfix] Correct OneFormer PTM,
metrics, and runtime overlay", merged)
Project: NVIDIA-TAO/tao-pytorch (nvidia_tao_pytorch/cv/oneformer/model/pl_oneformer.py)
What hung: the merged fix explains itself: "Lightning can invoke this hook on a rank that received
no samples. Still enter every configured dataloader's collective with zero local statistics so that
ranks cannot diverge or deadlock." Before it, `validation_step_outputs` only has keys for the
dataloaders this rank received batches from (a small validation set split over 8 ranks leaves some
ranks without any batch of it), and `_compute_and_log_metrics` iterates over those keys, logging
per-dataset metrics with `sync_dist=True` -- each one a reduction when Lightning syncs the epoch
results -- under `multi`, itself computed from this rank's number of keys. Ranks then issue
different numbers of syncs and the validation end blocks; a rank with no sample at all raises
(0/0) before the combined logs. Reviewer (vpraveen-nv): "with the pre-collective raise removed, a
fully empty evaluation now completes [...] Since the reduction now runs symmetrically".
Fix (the PR, merged): the outputs are re-keyed by every configured dataloader index (empty lists
where this rank saw nothing), `multi` follows from that, and the per-dataloader statistics are
summed across ranks explicitly before logging with `sync_dist=False`.
Expected rankcheck findings: RC103 on the loop over this rank's dataloader keys, and RC101 on the
per-dataset `self.log(..., sync_dist=True)` under `multi`, a per-rank test.
(Trimmed: panoptic metrics, per-class IoU logs, the status logger, prediction/visualization, the
model. The loss in `training_step` is a stand-in.)
"""
import numpy as np
import pytorch_lightning as pl
import torch
import torch.nn.functional as F


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

    def _compute_and_log_metrics(self, outputs_by_dl, dataset_names, prefix=""):
        multi = dataset_names is not None and len(outputs_by_dl) > 1
        combined_intersect, combined_union, combined_label = 0, 0, 0
        for dl_idx in sorted(outputs_by_dl.keys()):  # expect: RC103
            total_intersect, total_union, total_label = 0, 0, 0
            for out in outputs_by_dl[dl_idx]:
                total_intersect += out["area_intersect"]
                total_union += out["area_union"]
                total_label += out["area_label"]
            combined_intersect += total_intersect
            combined_union += total_union
            combined_label += total_label
            if multi:
                ds_name = dataset_names[dl_idx]
                miou = float(np.nanmean(total_intersect / total_union))
                self.log(f"{prefix}mIoU/{ds_name}", miou, on_step=False, on_epoch=True, sync_dist=True,  # expect: RC101
                         add_dataloader_idx=False)
        combined_miou = float(np.nanmean(combined_intersect / combined_union))
        combined_acc = float(combined_intersect.sum() / combined_label.sum())
        self.log(f"{prefix}mIoU", combined_miou, on_step=False, on_epoch=True, prog_bar=True, sync_dist=True,
                 add_dataloader_idx=False)
        self.log(f"{prefix}all_acc", combined_acc, on_step=False, on_epoch=True, sync_dist=True,
                 add_dataloader_idx=False)

    def on_validation_epoch_end(self):
        self._compute_and_log_metrics(self.validation_step_outputs, self._get_val_dataset_names())
        self.validation_step_outputs.clear()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr, weight_decay=0.05)
