"""Safe look-alike of rc103_lightning_fit_over_a_hand_sharded_iterable.py: the validation data is
a map-style dataset, which Lightning's DistributedSampler splits into equal, padded shares, so
every rank runs the same number of validation steps and logs the same number of times."""
import json

import lightning as L
import torch
from torch.utils.data import DataLoader, Dataset


class Lines(Dataset):
    def __init__(self, files):
        self.rows = []
        for path in files:
            with open(path) as handle:
                self.rows.extend(json.loads(line)["ids"] for line in handle)

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, index):
        return torch.tensor(self.rows[index])


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(16, 2)

    def training_step(self, batch, batch_idx):
        return self.net(batch.float()).sum()

    def validation_step(self, batch, batch_idx):
        loss = self.net(batch.float()).sum()
        self.log("val_loss", loss, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class Files(L.LightningDataModule):
    def __init__(self, train_files, val_files):
        super().__init__()
        self.train_files = train_files
        self.val_files = val_files

    def train_dataloader(self):
        return DataLoader(list(range(64)), batch_size=8)

    def val_dataloader(self):
        return DataLoader(Lines(self.val_files), batch_size=8)


def main(train_files, val_files):
    trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp", max_epochs=3)
    trainer.fit(Classifier(), datamodule=Files(train_files, val_files))
