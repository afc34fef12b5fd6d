"""BaseTrainer of the incremental-segmentation code: epoch loop, best-model monitoring, checkpoints,
and the class prototypes / feature noise computed from the training set for the next step.

Safe twin of star_prototypes_on_rank0_through_syncbn_forward: `compute_prototypes` and
`compute_noise` switch the model to eval mode for their forward passes and back to train mode
afterwards (jinpeng0528/STAR#2, commit ad630ec), so rank 0's prototype forwards use the
SyncBatchNorm running statistics and issue no collective; the rank-0 guard is unchanged.
"""
import os
from abc import abstractmethod

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.tensorboard import SummaryWriter


class BaseTrainer:
    def __init__(self, config, logger, gpu):
        self.config = config
        cfg_trainer = config["trainer"]
        self.epochs = cfg_trainer["epochs"]
        self.save_period = cfg_trainer["epochs"] if cfg_trainer["save_period"] == -1 else cfg_trainer["save_period"]
        self.validation_period = cfg_trainer["validation_period"]
        self.monitor = cfg_trainer.get("monitor", "off")
        self.rank = torch.distributed.get_rank()
        self.logger = logger
        self.writer = SummaryWriter(config["log_dir"]) if self.rank == 0 else None
        self.device = gpu

        if self.monitor == "off":
            self.mnt_mode = "off"
            self.mnt_best = 0
        else:
            self.mnt_mode, self.mnt_metric = self.monitor.split()
            self.mnt_best = float("inf") if self.mnt_mode == "min" else -float("inf")
            self.early_stop = cfg_trainer.get("early_stop", float("inf"))

        self.start_epoch = 1
        self.checkpoint_dir = config["save_dir"]
        os.makedirs(self.checkpoint_dir, exist_ok=True)

    @abstractmethod
    def _train_epoch(self, epoch):
        raise NotImplementedError

    def train(self):
        not_improved_count = 0
        for epoch in range(self.start_epoch, self.epochs + 1):
            result, val_flag = self._train_epoch(epoch)

            log = {"epoch": epoch}
            log.update(result)
            for key, value in log.items():
                self.logger.info("    {:15s}: {}".format(str(key), value))

            if self.rank == 0:
                if val_flag and self.mnt_mode != "off":
                    improved = (self.mnt_mode == "min" and log[self.mnt_metric] <= self.mnt_best) or (
                        self.mnt_mode == "max" and log[self.mnt_metric] >= self.mnt_best
                    )
                    if improved:
                        self.mnt_best = log[self.mnt_metric]
                        not_improved_count = 0
                        self._save_best_model(epoch)
                    else:
                        not_improved_count += 1

                if epoch % self.save_period == 0:
                    self._save_checkpoint(epoch)

                    self.compute_prototypes(self.config)
                    self.compute_noise(self.config)
                    self.save_prototypes(self.config, epoch)

        if self.writer is not None:
            self.writer.close()

    def save_prototypes(self, config, epoch):
        save_file = os.path.join(self.checkpoint_dir, "prototypes-epoch{}.pth".format(epoch))
        torch.save(
            {
                "numbers": self.numbers,
                "prototypes": self.prototypes,
                "norm_mean_and_std": self.norm_mean_and_std,
                "noise": self.noise,
            },
            save_file,
        )

    def compute_cls_number(self, config):
        self.logger.info("computing number of pixels...")
        n_new, n_old = self.n_new_classes, self.n_old_classes
        numbers = torch.zeros(n_new + 1, device=self.device)
        with torch.no_grad():
            for data in self.train_loader:
                small_label = data["label"][:, 8::16, 8::16].to(self.device)
                numbers[0] += torch.sum(small_label == 0).item()
                for i in range(1, n_new + 1):
                    numbers[i] += torch.sum(small_label == i + n_old).item()
        self.numbers = numbers

    def compute_prototypes(self, config):
        n_new, n_old = self.n_new_classes, self.n_old_classes
        prototypes = torch.zeros(n_new, 256, device="cuda")
        norms = {k: [] for k in range(n_new)}
        norm_mean_and_std = torch.zeros(2, n_new, device="cuda")

        self.logger.info("computing prototypes...")
        self.model.eval()
        with torch.no_grad():
            for batch_idx, data in enumerate(self.train_loader):
                logit, features, _ = self.model(data["image"].cuda(), ret_intermediate=True)

                target = label_to_one_hot(data["label"], logit[:, -n_new:], n_old)
                small_target = target[:, :, 8::16, 8::16].cuda()
                small_label = data["label"][:, 8::16, 8::16].cuda()

                normalized = F.normalize(features[-1], p=2, dim=1)
                class_region = small_target.unsqueeze(2) * normalized.unsqueeze(1)
                prototypes = prototypes + class_region.sum(dim=[0, 3, 4])

                norm = torch.norm(features[-1], p=2, dim=1)
                for cls in small_label.unique():
                    if cls in [0, 255]:
                        continue
                    norms[int(cls) - n_old - 1].append(norm[small_label == cls])
                self.progress(batch_idx, len(self.train_loader))

            self.prototypes = F.normalize(prototypes, p=2, dim=1)
            for k in range(n_new):
                values = torch.cat(norms[k], dim=0) if norms[k] else torch.zeros(1, device="cuda")
                norm_mean_and_std[0, k] = values.mean()
                norm_mean_and_std[1, k] = values.std()
            self.norm_mean_and_std = norm_mean_and_std

        self.model.train()

    def compute_noise(self, config):
        n_new, n_old = self.n_new_classes, self.n_old_classes
        prototypes = self.prototypes
        noise = torch.zeros(n_new, 256, device="cuda")
        noise_cnt = torch.zeros(n_new, device="cuda")

        self.logger.info("computing noise...")
        self.model.eval()
        with torch.no_grad():
            for batch_idx, data in enumerate(self.train_loader):
                logit, features, _ = self.model(data["image"].cuda(), ret_intermediate=True)

                target = label_to_one_hot(data["label"], logit[:, -n_new:], n_old)
                small_target = target[:, :, 8::16, 8::16].cuda()
                small_label = data["label"][:, 8::16, 8::16].cuda()

                normalized = F.normalize(features[-1], p=2, dim=1)
                class_region = small_target.unsqueeze(2) * normalized.unsqueeze(1)
                for cls in small_label.unique():
                    if cls in [0, 255]:
                        continue
                    k = int(cls) - n_old - 1
                    d = class_region[:, k].permute(1, 0, 2, 3)[:, small_label == cls] - prototypes[k].unsqueeze(1)
                    noise[k] = noise[k] + (d ** 2).sum(dim=1)
                    noise_cnt[k] = noise_cnt[k] + (small_label == cls).sum()
                self.progress(batch_idx, len(self.train_loader))

            self.noise = torch.sqrt(noise / noise_cnt.clamp(min=1).unsqueeze(1))

        self.model.train()

    def progress(self, i, total_length):
        period = total_length // 5
        if period and i % period == 0:
            self.logger.info(f"[{i}/{total_length}]")

    def _state(self, epoch):
        model = self.model.module if isinstance(self.model, nn.parallel.DistributedDataParallel) else self.model
        return {
            "arch": type(model).__name__,
            "epoch": epoch,
            "state_dict": model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "lr_scheduler": self.lr_scheduler.state_dict(),
            "scaler": self.scaler.state_dict(),
            "monitor_best": self.mnt_best,
        }

    def _save_checkpoint(self, epoch):
        filename = os.path.join(self.checkpoint_dir, "checkpoint-epoch{}.pth".format(epoch))
        torch.save(self._state(epoch), filename)
        self.logger.info("Saving checkpoint: {} ...".format(filename))

    def _save_best_model(self, epoch):
        torch.save(self._state(epoch), os.path.join(self.checkpoint_dir, "model_best.pth"))
        self.logger.info("Saving current best: model_best.pth ...")


def label_to_one_hot(label, logit, n_old_classes, ignore_index=255):
    target = torch.zeros_like(logit).float()
    for cls_idx in label.unique():
        if cls_idx in [0, ignore_index]:
            continue
        target[:, int(cls_idx) - (n_old_classes + 1)] = (label.to(logit.device) == int(cls_idx)).float()
    return target
