"""A Lightning fine-tuning script whose datamodule shards the validation files by hand: each rank's
IterableDataset reads every world_size-th file, so the ranks get different numbers of batches.
Lightning's loop calls `validation_step` once per batch, and the step logs with `sync_dist=True`:
the ranks that still have batches wait in that all-reduce for the ones that ran out."""
import json

import lightning as L
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, IterableDataset


class ShardedLines(IterableDataset):
    def __init__(self, files):
        self.files = files

    def __iter__(self):
        for path in self.files[dist.get_rank()::dist.get_world_size()]:
            with open(path) as handle:
                for line in handle:
                    yield torch.tensor(json.loads(line)["ids"])


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(16, 2)

    def training_step(self, batch, batch_idx):
        return self.net(batch.float()).sum()

    def validation_step(self, batch, batch_idx):
        loss = self.net(batch.float()).sum()
        self.log("val_loss", loss, sync_dist=True)  # expect: RC103

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
        return DataLoader(ShardedLines(self.val_files), batch_size=8)


def main(train_files, val_files):
    trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp", max_epochs=3)
    trainer.fit(Classifier(), datamodule=Files(train_files, val_files))
