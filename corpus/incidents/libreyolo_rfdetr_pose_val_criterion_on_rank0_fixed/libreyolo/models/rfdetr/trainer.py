"""Native RF-DETR trainer for LibreYOLO, pose task (trimmed): builds the DETR set criterion in
`on_setup`, uses it for the training loss, and -- for pose -- overrides `_run_validation` to
compute a validation loss with the same criterion before the keypoint mAP validation.

Safe twin: as in LibreYOLO#349's fix (e24ea23), the pose validation-loss loop runs only when not
distributed, so rank 0 alone never enters the criterion's all-reduce.

Part of the reconstruction of https://github.com/LibreYOLO/libreyolo/pull/349; see
libreyolo_rfdetr_pose_val_criterion_on_rank0/libreyolo/training/trainer.py for the incident
description.
"""
from __future__ import annotations

import dataclasses
import logging
from typing import Dict, List, Optional

import torch
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from ...data import YOLOPoseDataset, get_img_files, img2label_paths, pose_collate_fn
from ...training.distributed import is_main_process, unwrap_model
from ...training.trainer import BaseTrainer

logger = logging.getLogger(__name__)


@dataclasses.dataclass
class RFDETRConfig:
    data: str = "coco8-pose"
    train_images: str = "datasets/coco8-pose/images/train"
    val_images: str = "datasets/coco8-pose/images/val"
    size: str = "s"
    epochs: int = 100
    batch: int = 16
    imgsz: int = 560
    workers: int = 4
    lr0: float = 1e-4
    weight_decay: float = 1e-4
    warmup_epochs: float = 0.0
    lr_drop: int = 100
    amp: bool = True
    ema: bool = True
    ema_decay: float = 0.993
    eval_interval: int = 1
    save_period: int = 10
    patience: int = 50
    num_classes: int = 1
    num_keypoints: int = 17
    project: str = "runs/pose"
    name: str = "rfdetr_pose"
    sync_bn: bool = False


class RFDETRStepScheduler:
    """RF-DETR upstream-style warmup plus step decay schedule."""

    def __init__(self, lr: float, iters_per_epoch: int, total_epochs: int, warmup_epochs: float = 0.0, lr_drop: int = 100):
        self.lr = lr
        self.warmup_iters = int(iters_per_epoch * warmup_epochs)
        self.drop_iter = int(iters_per_epoch * lr_drop)

    def update_lr(self, iters: int) -> float:
        if self.warmup_iters > 0 and iters < self.warmup_iters:
            return self.lr * float(iters) / float(max(1, self.warmup_iters))
        if iters < self.drop_iter:
            return self.lr
        return self.lr * 0.1


class RFDETRTrainer(BaseTrainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if getattr(self.wrapper_model, "task", "detect") == "pose":
            self.best_metric_key = "metrics/keypoints_mAP50-95"

    def _ddp_find_unused_parameters(self) -> bool:
        # Detection and pose can leave transformer branches unused on some passes.
        return getattr(self.wrapper_model, "task", "detect") in {"detect", "pose"}

    def create_scheduler(self, iters_per_epoch: int):
        return RFDETRStepScheduler(
            self.config.lr0,
            iters_per_epoch,
            self.config.epochs,
            warmup_epochs=self.config.warmup_epochs,
            lr_drop=self.config.lr_drop,
        )

    def _setup_data(self):
        train_imgs = get_img_files(self.config.train_images)
        val_imgs = get_img_files(self.config.val_images)
        train_ds = YOLOPoseDataset(train_imgs, img2label_paths(train_imgs), self.config.imgsz, self.config.num_keypoints)
        val_ds = YOLOPoseDataset(val_imgs, img2label_paths(val_imgs), self.config.imgsz, self.config.num_keypoints)
        per_rank_batch = max(1, self.config.batch // self.world_size)
        sampler = DistributedSampler(train_ds, shuffle=True) if self.is_distributed else None
        self.train_loader = DataLoader(
            train_ds,
            batch_size=per_rank_batch,
            sampler=sampler,
            shuffle=sampler is None,
            num_workers=self.config.workers,
            collate_fn=pose_collate_fn,
            drop_last=True,
        )
        # Validation runs on rank 0 only, over the whole validation set.
        self.val_loader = DataLoader(
            val_ds,
            batch_size=self.config.batch,
            shuffle=False,
            num_workers=self.config.workers,
            collate_fn=pose_collate_fn,
        )

    def on_setup(self):
        if self.model.nb_classes != self.config.num_classes:
            self.model.nb_classes = self.config.num_classes
            self.model.args.num_classes = self.config.num_classes
        if getattr(self.wrapper_model, "task", "detect") == "pose":
            self.model.args.num_keypoints = self.config.num_keypoints
        self.criterion, _ = self.model.build_criterion_and_postprocess()
        self.criterion.to(self.device)

    def _targets_to_rfdetr_list(self, targets: torch.Tensor, *, height: int, width: int) -> list[dict]:
        scale = torch.tensor([width, height, width, height], device=targets.device, dtype=targets.dtype)
        target_list = []
        for batch_idx in range(targets.shape[0]):
            t = targets[batch_idx]
            valid = (t[:, 3] > 0) & (t[:, 4] > 0)
            t_valid = t[valid]
            keypoints = t_valid[:, 5:].view(-1, self.config.num_keypoints, 3).clone()
            keypoints[..., 0] /= width
            keypoints[..., 1] /= height
            target_list.append(
                {
                    "labels": t_valid[:, 0].long(),
                    "boxes": (t_valid[:, 1:5] / scale).clamp(0.0, 1.0),
                    "keypoints": keypoints.clamp(0.0, 1.0),
                }
            )
        return target_list

    def on_forward(self, imgs: torch.Tensor, targets: torch.Tensor, polygons: Optional[List] = None) -> Dict:
        height, width = imgs.shape[-2], imgs.shape[-1]
        target_list = self._targets_to_rfdetr_list(targets, height=height, width=width)
        outputs = self.model(imgs, targets=target_list)
        loss_dict = self.criterion(outputs, target_list)
        weight_dict = self.criterion.weight_dict
        total = sum(loss_dict[key] * weight_dict[key] for key in loss_dict if key in weight_dict)
        result = {"total_loss": total}
        result.update(loss_dict)
        return result

    def _run_validation(self, epoch: int, *, save_plots: bool | None = None):
        if getattr(self.wrapper_model, "task", "detect") != "pose":
            return super()._run_validation(epoch, save_plots=save_plots)
        if getattr(self, "val_loader", None) is None:
            return None

        model = self.ema_model.ema if self.ema_model else unwrap_model(self.model)
        was_training = model.training
        model.eval()

        total_loss = 0.0
        num_batches = 0
        pose_metrics = None
        try:
            # The criterion all-reduces its box count over the process group; under DDP only
            # rank 0 is here, so the validation loss is skipped and only keypoint mAP is computed.
            if not self.is_distributed:
                with torch.no_grad():
                    for batch in self.val_loader:
                        imgs = batch[0].to(self.device, non_blocking=True)
                        targets = batch[1].to(self.device, non_blocking=True)
                        target_list = self._targets_to_rfdetr_list(targets, height=imgs.shape[-2], width=imgs.shape[-1])
                        outputs = model(imgs, targets=target_list)
                        loss_dict = self.criterion(outputs, target_list)
                        total = sum(
                            loss_dict[key] * self.criterion.weight_dict[key]
                            for key in loss_dict
                            if key in self.criterion.weight_dict
                        )
                        total_loss += float(total.item())
                        num_batches += 1
            pose_metrics = self._run_pose_metric_validation(model, epoch, save_plots=save_plots)
        finally:
            if was_training:
                model.train()

        avg_loss = total_loss / max(num_batches, 1)
        metrics = {"loss/val": avg_loss}
        if pose_metrics:
            metrics.update(pose_metrics)
            mAP50_95 = metrics.get("metrics/keypoints_mAP50-95")
            logger.info("Validation - loss/val: %.4f, keypoints_mAP50-95: %.4f", avg_loss, mAP50_95 or 0.0)
            return {
                "best_metric": mAP50_95 if mAP50_95 is not None else 0.0,
                "best_metric_key": "metrics/keypoints_mAP50-95",
                "metrics": metrics,
            }
        logger.info("Validation - loss/val: %.4f", avg_loss)
        return {"best_metric": -avg_loss, "best_metric_key": "loss/val", "metrics": metrics}

    def _run_pose_metric_validation(self, eval_model: torch.nn.Module, epoch: int, *, save_plots: bool | None = None) -> Dict[str, float] | None:
        if self.wrapper_model is None:
            logger.warning("Skipping pose mAP validation: wrapper_model is missing")
            return None
        try:
            from libreyolo.validation import PoseValidator, ValidationConfig

            val_config = ValidationConfig(
                data=self.config.data,
                split="val",
                batch_size=self.config.batch,
                imgsz=self.config.imgsz,
                conf_thres=0.001,
                iou_thres=0.65,
                device=str(self.device),
            )
            results = PoseValidator(model=self.wrapper_model, config=val_config).run(model=eval_model)
            return {k: float(v) for k, v in results.items() if k.startswith("metrics/")}
        except Exception as e:
            if is_main_process():
                logger.warning(f"Pose mAP validation failed at epoch {epoch + 1}: {e}")
            return None
