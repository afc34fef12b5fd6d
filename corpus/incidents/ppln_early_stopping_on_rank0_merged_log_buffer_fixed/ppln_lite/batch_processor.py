"""Turns a batch into model outputs, the loss and the scalar values the log buffer records."""
import torch
import torch.nn.functional as F


class ClassificationBatchProcessor:
    def __init__(self, device):
        self.device = device

    def _forward(self, model, batch):
        images, labels = batch
        images = images.to(self.device, non_blocking=True)
        labels = labels.to(self.device, non_blocking=True)
        logits = model(images)
        loss = F.cross_entropy(logits, labels)
        acc = (logits.argmax(dim=1) == labels).float().mean()
        return loss, acc, labels.size(0)

    def train_step(self, model, batch):
        loss, acc, n = self._forward(model, batch)
        return {"loss": loss, "values": {"base_loss": loss.item(), "acc": acc.item()}, "num_samples": n}

    @torch.no_grad()
    def val_step(self, model, batch):
        loss, acc, n = self._forward(model, batch)
        return {"loss": loss, "values": {"base_loss": loss.item(), "acc": acc.item()}, "num_samples": n}
