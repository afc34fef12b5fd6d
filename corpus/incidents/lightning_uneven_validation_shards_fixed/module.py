"""Safe twin of lightning_uneven_validation_shards: same module; the validation data is now split
by Lightning's DistributedSampler (see data.py), so every rank runs the same number of steps.

Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/20561
"""
from typing import Dict

import lightning as L
import torch


class CausalLMModule(L.LightningModule):
    def __init__(self, model: torch.nn.Module, lr: float = 2e-5):
        super().__init__()
        self.model = model
        self.lr = lr

    def training_step(self, batch: Dict, batch_idx: int):
        loss = self.model(input_ids=batch["input_ids"], labels=batch["input_ids"]).loss
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, input_dict: Dict, batch_idx: int) -> Dict[str, torch.Tensor]:
        out = self.model(input_ids=input_dict["input_ids"], labels=input_dict["input_ids"])
        loss_dict = {"nll": out.loss, "ppl": torch.exp(out.loss)}
        self.log_dict(
            {f"val_loss/{key}": loss for key, loss in loss_dict.items()},
            on_step=False,
            on_epoch=True,
            sync_dist=True,
        )
        return loss_dict

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr)
