"""A base trainer validates on rank 0 only: the other ranks barrier and return early, rank 0 runs
the `_run_validation` hook. The base hook computes metrics locally; a model family's trainer
overrides it to compute a validation loss with its criterion, which all-reduces the box count.
On a trainer of that subclass, rank 0 waits in the criterion's all_reduce while the others have
left (LibreYOLO's RF-DETR pose trainer).
"""
import torch
import torch.distributed as dist


class SetCriterion:
    def __call__(self, outputs, targets):
        num_boxes = torch.tensor([float(len(targets))])
        dist.all_reduce(num_boxes)
        return (outputs - targets).abs().sum() / num_boxes


class BaseTrainer:
    def __init__(self, model, val_loader):
        self.model = model
        self.val_loader = val_loader
        self.is_distributed = dist.is_initialized()

    def validate_epoch(self, epoch):
        if self.is_distributed and dist.get_rank() != 0:
            dist.barrier()
            return None  # expect: RC102
        try:
            return self._run_validation(epoch)
        finally:
            if self.is_distributed:
                dist.barrier()

    def _run_validation(self, epoch):
        correct = 0
        for images, targets in self.val_loader:
            correct += int((self.model(images).argmax(-1) == targets).sum())
        return {"epoch": epoch, "correct": correct}


class DetrTrainer(BaseTrainer):
    def __init__(self, model, val_loader):
        super().__init__(model, val_loader)
        self.criterion = SetCriterion()

    def _run_validation(self, epoch):
        total = 0.0
        for images, targets in self.val_loader:
            total += float(self.criterion(self.model(images), targets))
        return {"epoch": epoch, "val_loss": total}
