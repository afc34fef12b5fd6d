"""The template trainer (the pytorch-template layout): the base class runs the epochs, and rank 0
evaluates after each one on the module inside the DistributedDataParallel wrapper the subclass
stores in `self.model` (`self.model.module`): a plain forward, which waits for no other rank."""
import torch
import torch.distributed as dist


class BaseTrainer:
    def __init__(self, config, train_loader, valid_loader):
        self.config = config
        self.rank = dist.get_rank()
        self.train_loader = train_loader
        self.valid_loader = valid_loader

    def _train_epoch(self, epoch):
        raise NotImplementedError

    def train(self):
        for epoch in range(1, self.config["epochs"] + 1):
            self._train_epoch(epoch)
            if self.rank == 0:
                self._valid_epoch(epoch)

    def _valid_epoch(self, epoch):
        total = 0.0
        with torch.no_grad():
            for images, labels in self.valid_loader:
                total += (self.model.module(images).argmax(1) == labels).float().mean().item()
        print(f"epoch {epoch}: accuracy {total / len(self.valid_loader):.3f}")
