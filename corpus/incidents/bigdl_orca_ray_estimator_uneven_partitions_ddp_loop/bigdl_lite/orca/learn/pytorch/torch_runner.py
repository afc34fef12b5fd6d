"""Trimmed bigdl/orca/learn/pytorch/torch_runner.py: one runner per Ray actor; it joins a gloo
process group, wraps the model in DDP and runs the training operator over its own loader."""
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from .training_operator import TrainingOperator
from .utils import TorchDistBackend


class TorchRunner:
    def __init__(self, model_creator, optimizer_creator, loss_creator=None, config=None,
                 training_operator_cls=TrainingOperator, scheduler_step_freq=None, sync_stats=True):
        self.model_creator = model_creator
        self.optimizer_creator = optimizer_creator
        self.loss_creator = loss_creator
        self.config = {} if config is None else config
        self.training_operator_cls = training_operator_cls
        self.scheduler_step_freq = scheduler_step_freq
        self.sync_stats = sync_stats
        self.epochs = 0

    def setup_torch_distribute(self, url, world_rank, world_size):
        dist.init_process_group(backend="gloo", init_method=url, rank=world_rank, world_size=world_size)
        self.rank = world_rank
        self.size = world_size
        self.models = [self.model_creator(self.config)]
        self.optimizers = [self.optimizer_creator(self.models[0], self.config)]
        self.criterion = self.loss_creator(self.config) if self.loss_creator else nn.MSELoss()
        training_models = [DistributedDataParallel(m) for m in self.models]
        self.training_operator = self.training_operator_cls(
            self.config, models=training_models, optimizers=self.optimizers,
            criterion=self.criterion, world_rank=self.rank,
            sync_stats=self.sync_stats, dist_backend=TorchDistBackend(),
        )

    def with_sampler(self, loader):
        return DataLoader(
            loader.dataset, batch_size=loader.batch_size, shuffle=False,
            collate_fn=loader.collate_fn, drop_last=loader.drop_last,
            sampler=DistributedSampler(loader.dataset, num_replicas=self.size, rank=self.rank),
        )

    def train_epochs(self, data_creator, epochs=1, batch_size=32, profile=False, info=None,
                     wrap_dataloader=None):
        loader = data_creator(self.config.copy(), batch_size)
        if wrap_dataloader:
            loader = self.with_sampler(loader)
        stats_list = []
        for i in range(epochs):
            stats = self.train_epoch(loader, info=info)
            if self.rank == 0:
                print(f"Finished training epoch {i + 1}, stats: {stats}")
            stats_list.append(stats)
        return stats_list

    def train_epoch(self, data_loader, info=None):
        info = dict(info or {})
        info["scheduler_step"] = self.scheduler_step_freq
        stats = self.training_operator.train_epoch(iter(data_loader), info)
        self.epochs += 1
        return dict(epoch=self.epochs, **stats)
