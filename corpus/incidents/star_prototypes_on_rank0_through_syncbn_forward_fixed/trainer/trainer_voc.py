"""Trainer for the base step on VOC: DDP around the (SyncBatchNorm) DeepLabV3, weighted BCE on the
new classes, AMP, per-epoch validation every `validation_period` epochs."""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from base import BaseTrainer


class WBCELoss(nn.Module):
    def __init__(self, pos_weight, n_old_classes, n_new_classes, ignore_index=255):
        super().__init__()
        self.pos_weight = pos_weight
        self.n_old_classes = n_old_classes
        self.n_new_classes = n_new_classes
        self.ignore_index = ignore_index

    def forward(self, logit, label):
        n, c, h, w = logit.shape
        target = torch.zeros_like(logit)
        for k in range(c):
            target[:, k] = (label == k + self.n_old_classes).float()
        valid = (label != self.ignore_index).unsqueeze(1).float()
        loss = nn.functional.binary_cross_entropy_with_logits(
            logit, target, pos_weight=self.pos_weight.view(1, -1, 1, 1), reduction="none"
        )
        return loss * valid


class Trainer_base(BaseTrainer):
    def __init__(self, model, optimizer, config, task_info, data_loader, lr_scheduler=None, logger=None, gpu=None):
        super().__init__(config, logger, gpu)
        torch.cuda.set_device(self.device)
        model.to(self.device)
        self.model = DDP(model, device_ids=[gpu])

        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler
        self.task_info = task_info
        self.n_old_classes = len(task_info["old_class"])
        self.n_new_classes = len(task_info["new_class"])
        self.train_loader, self.val_loader = data_loader
        self.len_epoch = len(self.train_loader)
        self.scaler = torch.cuda.amp.GradScaler(enabled=config["use_amp"])

        pos_weight = torch.ones([self.n_new_classes], device=self.device) * config["hyperparameter"]["pos_weight"]
        self.BCELoss = WBCELoss(pos_weight, self.n_old_classes + 1, self.n_new_classes)
        self.compute_cls_number(config)

    def _train_epoch(self, epoch):
        torch.distributed.barrier()

        self.model.train()
        self.model.module.freeze_bn(affine_freeze=False)
        self.train_loader.sampler.set_epoch(epoch)

        total, count = 0.0, 0
        for batch_idx, data in enumerate(self.train_loader):
            image, label = data["image"].to(self.device), data["label"].to(self.device)
            with torch.cuda.amp.autocast(enabled=self.config["use_amp"]):
                logit, _, _ = self.model(image, ret_intermediate=False)
                loss_mbce = self.BCELoss(logit[:, -self.n_new_classes:], label).mean(dim=[0, 2, 3])
                loss = self.config["hyperparameter"]["mbce"] * loss_mbce.sum()

            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.optimizer.zero_grad(set_to_none=True)
            if self.lr_scheduler is not None:
                self.lr_scheduler.step()

            total += loss.item()
            count += 1
            if self.writer is not None:
                self.writer.add_scalar("train/loss", loss.item(), (epoch - 1) * self.len_epoch + batch_idx)

        log = {"loss": total / max(count, 1)}
        val_flag = False
        if self.val_loader is not None and epoch % self.validation_period == 0:
            val_flag = True
            log.update(self._valid_epoch(epoch))
        return log, val_flag

    def _valid_epoch(self, epoch):
        torch.distributed.barrier()
        self.model.eval()
        n_classes = self.n_old_classes + self.n_new_classes + 1
        confusion = torch.zeros(n_classes, n_classes, device=self.device)
        with torch.no_grad():
            for data in self.val_loader:
                image, label = data["image"].to(self.device), data["label"].to(self.device)
                logit, _, _ = self.model(image)
                pred = logit.argmax(dim=1)
                keep = label != 255
                idx = label[keep] * n_classes + pred[keep]
                confusion += torch.bincount(idx, minlength=n_classes ** 2).view(n_classes, n_classes).float()
        dist.all_reduce(confusion)
        iou = confusion.diag() / (confusion.sum(0) + confusion.sum(1) - confusion.diag()).clamp(min=1)
        return {"Mean_IoU": iou.mean().item() * 100}
