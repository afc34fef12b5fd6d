"""Trimmed bigdl/orca/learn/pytorch/training_operator.py (adapted by BigDL from Ray SGD's
TrainingOperator) as it was before intel/ipex-llm#3626."""
import torch

from .utils import NUM_SAMPLES, AverageMeterCollection


class TrainingOperator:
    def __init__(self, config, models, optimizers, world_rank, criterion=None, schedulers=None,
                 sync_stats=False, dist_backend=None):
        self._config = config
        self._models = models
        self._optimizers = optimizers
        self._world_rank = world_rank
        self._criterion = criterion
        self._schedulers = schedulers
        self.sync_stats = sync_stats
        self.dist_backend = dist_backend
        self.global_step = 0

    @property
    def model(self):
        return self._models[0]

    @property
    def optimizer(self):
        return self._optimizers[0]

    @property
    def criterion(self):
        return self._criterion

    @property
    def scheduler(self):
        return self._schedulers[0] if self._schedulers else None

    def train_epoch(self, iterator, info):
        """One pass over this worker's loader; `self.model` is the DDP-wrapped model, so every
        `train_batch` runs the DDP gradient all-reduce in its backward."""
        metric_meters = AverageMeterCollection()
        self.model.train()
        for batch_idx, batch in enumerate(iterator):  # expect: RC103
            batch_info = {"batch_idx": batch_idx, "global_step": self.global_step}
            batch_info.update(info)
            metrics = self.train_batch(batch, batch_info=batch_info)
            if self.scheduler and info.get("scheduler_step") == "batch":
                self.scheduler.step()
            metric_meters.update(metrics, n=metrics.pop(NUM_SAMPLES, 1))
            self.global_step += 1

        if self.scheduler and info.get("scheduler_step") == "epoch":
            self.scheduler.step()
        return metric_meters.summary(sync_stats=self.sync_stats, dist_backend=self.dist_backend)

    def train_batch(self, batch, batch_info):
        *features, target = batch
        output = self.model(*features)
        loss = self.criterion(output, target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return {"train_loss": loss.item(), NUM_SAMPLES: features[0].size(0)}
