"""The fix: every rank computes its local error and logs with sync_dist=True."""
import lightning.pytorch as pl
import torch


class LitForecaster(pl.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.rnn = torch.nn.GRU(16, 64, batch_first=True)
        self.head = torch.nn.Linear(64, 1)
        self.val_errors = []

    def validation_step(self, batch, batch_idx):
        x, y = batch
        out, _ = self.rnn(x)
        self.val_errors.append((self.head(out[:, -1]).squeeze(-1) - y).abs().mean())

    def on_validation_epoch_end(self):
        mae = torch.stack(self.val_errors).mean()
        self.log("val_mae", mae, sync_dist=True, prog_bar=True)
        self.val_errors.clear()
