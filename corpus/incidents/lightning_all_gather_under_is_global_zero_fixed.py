"""Safe twin of lightning_all_gather_under_is_global_zero.py: every rank calls `self.all_gather`;
only global zero saves and prints the gathered scores.

Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/16541
"""
import pytorch_lightning as pl
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class ScoreModel(pl.LightningModule):
    def __init__(self, dim_in: int, dim_out: int):
        super().__init__()
        self.fc = torch.nn.Linear(dim_in, dim_out)

    def forward(self, x):
        return self.fc(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.binary_cross_entropy_with_logits(self(x), y)

    def test_step(self, batch, batch_idx):
        x, _ = batch
        return torch.sigmoid(self(x))

    def test_epoch_end(self, outputs):
        gathered = self.all_gather(torch.cat(outputs))
        if self.trainer.is_global_zero:
            scores = gathered.flatten(0, 1).cpu()
            torch.save(scores, "test_scores.pt")
            print(f"gathered {len(scores)} test scores")

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters())


if __name__ == "__main__":
    x, y = torch.rand(10, 5), torch.randint(0, 2, (10, 1)).float()
    loader = DataLoader(TensorDataset(x, y), batch_size=2)
    trainer = pl.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=1)
    model = ScoreModel(5, 1)
    trainer.fit(model, loader)
    trainer.test(model, loader)
