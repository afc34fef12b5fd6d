"""Look-alikes of rc102_lightning_training_step_returns_none_on_empty_batch. A module that
optimizes by hand (`self.automatic_optimization = False`) decides itself what each rank runs, and
returning None from its training_step skips nothing Lightning would do; and a module under
automatic optimization that zeroes the loss of an empty batch, instead of returning None, runs
backward on every rank.
"""
import lightning as L
import torch
import torch.nn.functional as F


class ManualTagger(L.LightningModule):
    def __init__(self, encoder: torch.nn.Module, num_tags: int):
        super().__init__()
        self.automatic_optimization = False
        self.encoder = encoder
        self.head = torch.nn.Linear(encoder.hidden_size, num_tags)

    def training_step(self, batch, batch_idx):
        keep = batch["labels"] != -100
        if not keep.any():
            return None
        optimizer = self.optimizers()
        logits = self.head(self.encoder(batch["input_ids"]))
        loss = F.cross_entropy(logits[keep], batch["labels"][keep])
        optimizer.zero_grad()
        self.manual_backward(loss)
        optimizer.step()
        return loss


class ZeroLossTagger(L.LightningModule):
    def __init__(self, encoder: torch.nn.Module, num_tags: int):
        super().__init__()
        self.encoder = encoder
        self.head = torch.nn.Linear(encoder.hidden_size, num_tags)

    def training_step(self, batch, batch_idx):
        keep = batch["labels"] != -100
        logits = self.head(self.encoder(batch["input_ids"]))
        if not keep.any():
            return logits.sum() * 0.0
        return F.cross_entropy(logits[keep], batch["labels"][keep])
