"""At the end of fitting, the export path is picked on global zero and broadcast inside the same
branch: Strategy.broadcast is a collective, the other ranks never call it."""
import os

import lightning.pytorch as pl
import torch


class LitAutoEncoder(pl.LightningModule):
    def __init__(self, export_root: str) -> None:
        super().__init__()
        self.export_root = export_root
        self.encoder = torch.nn.Linear(784, 32)
        self.decoder = torch.nn.Linear(32, 784)

    def training_step(self, batch, batch_idx):
        x, _ = batch
        x = x.view(x.size(0), -1)
        loss = torch.nn.functional.mse_loss(self.decoder(self.encoder(x)), x)
        self.log("train_loss", loss)
        return loss

    def on_fit_end(self) -> None:
        export_dir = None
        if self.trainer.is_global_zero:
            export_dir = os.path.join(self.export_root, f"v{len(os.listdir(self.export_root))}")
            os.makedirs(export_dir)
            export_dir = self.trainer.strategy.broadcast(export_dir)  # expect: RC101
        torch.save(self.encoder.state_dict(), os.path.join(export_dir, f"encoder-{self.global_rank}.pt"))
