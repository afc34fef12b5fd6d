"""The template trainer (the pytorch-template layout): the base class runs the epochs, and rank 0
evaluates the model after each one. The base class never stores `self.model`; the subclass
does, as the DistributedDataParallel wrapper, so the evaluation forwards on rank 0 alone are DDP
forwards, which broadcast buffers to ranks that have gone on to the next epoch."""
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
                self._valid_epoch(epoch)  # expect: RC101

    def _valid_epoch(self, epoch):
        total = 0.0
        with torch.no_grad():
            for images, labels in self.valid_loader:
                total += (self.model(images).argmax(1) == labels).float().mean().item()
        print(f"epoch {epoch}: accuracy {total / len(self.valid_loader):.3f}")
