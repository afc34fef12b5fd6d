"""A training script runs the test loop on global zero only: Trainer.test synchronises the
processes (barriers, reduced metrics), so rank 0 waits for ranks that already exited."""
import lightning as L
import torch
from lightning.pytorch.demos.boring_classes import BoringModel, RandomDataset
from torch.utils.data import DataLoader


def main() -> None:
    model = BoringModel()
    trainer = L.Trainer(accelerator="cpu", devices=2, strategy="ddp", max_epochs=2)
    trainer.fit(model, DataLoader(RandomDataset(32, 64), batch_size=2))
    if trainer.is_global_zero:
        results = trainer.test(model, DataLoader(RandomDataset(32, 64), batch_size=2))  # expect: RC101
        print(results)


if __name__ == "__main__":
    main()
