"""The look-alike of rc102_return_before_a_hook_a_subclass_overrides, as LibreYOLO fixed it: the
model family's override computes its validation loss only when the job is not distributed, so the
hook rank 0 runs alone issues no collective; the ranks meet again in the final barrier.
"""
import torch
import torch.distributed as dist


class SetCriterion:
    def __call__(self, outputs, targets):
        num_boxes = torch.tensor([float(len(targets))])
        if dist.is_initialized():
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
            return None
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
        if not self.is_distributed:
            for images, targets in self.val_loader:
                total += float(self.criterion(self.model(images), targets))
        return {"epoch": epoch, "val_loss": total}
