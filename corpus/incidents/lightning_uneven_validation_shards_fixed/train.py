"""Entry point: FSDP fit; Lightning inserts the DistributedSampler for the validation loader."""
import lightning as L
from lightning.pytorch.strategies import FSDPStrategy

from data import val_dataloader
from module import CausalLMModule


def main(model, tokenizer, train_loader, val_dir: str):
    trainer = L.Trainer(accelerator="gpu", devices=8, strategy=FSDPStrategy(), max_epochs=1)
    trainer.fit(CausalLMModule(model), train_dataloaders=train_loader, val_dataloaders=val_dataloader(val_dir, tokenizer))
