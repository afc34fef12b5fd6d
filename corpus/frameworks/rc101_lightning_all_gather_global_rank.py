"""Test-set predictions are all-gathered only on global rank 0 before writing them out; the
LightningModule.all_gather call is a collective every rank must join."""
import pytorch_lightning as pl
import torch


class LitRegressor(pl.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(8, 1)
        self.test_predictions = []

    def forward(self, x):
        return self.layer(x)

    def test_step(self, batch, batch_idx):
        x, _ = batch
        self.test_predictions.append(self(x).squeeze(-1))

    def on_test_epoch_end(self):
        local = torch.cat(self.test_predictions)
        if self.global_rank == 0:
            everything = self.all_gather(local)  # expect: RC101
            torch.save(everything.flatten().cpu(), "predictions.pt")
        self.test_predictions.clear()
