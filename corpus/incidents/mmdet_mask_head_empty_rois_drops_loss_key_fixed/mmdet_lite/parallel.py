"""Distributed wrapper (mmcv/parallel/distributed.py, MMDistributedDataParallel): `train_step` runs the
detector's forward through DDP, so that the following backward all-reduces the gradients, and parses
the loss dict of the wrapped detector."""
from torch.nn.parallel import DistributedDataParallel


class MMDistributedDataParallel(DistributedDataParallel):
    def train_step(self, data_batch, optimizer=None):
        losses = self(**data_batch)
        loss, log_vars = self.module._parse_losses(losses)
        return dict(loss=loss, log_vars=log_vars, num_samples=len(data_batch["img_metas"]))

    def val_step(self, data_batch, optimizer=None):
        return self.module(return_loss=False, **data_batch)
