"""Reading the trainer's metrics on rank 0 only, from a LightningModule hook: `logged_metrics`
computes what was logged, and the values logged with `sync_dist=True` are all-reduced right there,
so rank 0 waits in that all-reduce while the others have moved on (the sleap-nn#476 shape, from the
module's side). Look-alike: safe_lightning_module_logged_metrics_read_everywhere.py."""
import json

import lightning as L
import torch
import torch.nn.functional as F


class Regressor(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(8, 1)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", F.mse_loss(self.net(x), y), sync_dist=True)

    def on_validation_epoch_end(self):
        if self.global_rank == 0:
            metrics = self.trainer.logged_metrics  # expect: RC101
            with open("val.json", "a") as f:
                f.write(json.dumps({k: float(v) for k, v in metrics.items()}) + "\n")
