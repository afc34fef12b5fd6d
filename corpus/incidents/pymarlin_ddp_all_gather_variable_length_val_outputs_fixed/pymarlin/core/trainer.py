"""Epoch driver: runs the backend's train and validation passes and hands the coalesced outputs to
the module's end-of-epoch hooks."""
from dataclasses import dataclass

import torch
from torch.utils.data import DataLoader


@dataclass
class TrainerArguments:
    epochs: int = 3
    train_batch_size: int = 32
    val_batch_size: int = 64
    local_rank: int = 0
    device: int = 0
    model: torch.nn.Module = None
    optimizer: torch.optim.Optimizer = None


class Trainer:
    def __init__(self, module, trainer_backend, args: TrainerArguments):
        self.module = module
        self.backend = trainer_backend
        self.args = args
        self.args.model = module
        self.args.optimizer = module.get_optimizer()
        self.backend.init(self.args)

    def train(self):
        train_ds, val_ds = self.module.get_train_dataset(), self.module.get_val_dataset()
        train_dl = DataLoader(train_ds, batch_size=self.args.train_batch_size, sampler=self.backend.train_sampler(train_ds),
                              collate_fn=self.module.collate_fn)
        val_dl = DataLoader(val_ds, batch_size=self.args.val_batch_size, sampler=self.backend.val_sampler(val_ds),
                            collate_fn=self.module.collate_fn)
        for epoch in range(self.args.epochs):
            if hasattr(train_dl.sampler, "set_epoch"):
                train_dl.sampler.set_epoch(epoch)
            train_outputs = self.backend.train_dl(train_dl)
            self.module.on_end_train_epoch(epoch, *train_outputs)
            self.validate(epoch, val_dl)

    def validate(self, epoch, val_dl):
        val_outputs = self.backend.validate_dl(val_dl)
        self.module.on_end_val_epoch(epoch, *val_outputs)
