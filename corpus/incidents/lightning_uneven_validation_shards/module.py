"""LightningModule of an LLM trained with the FSDP strategy; validation logs its losses with
`sync_dist=True`.

Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/20561 ("Validation stuck when trainers have different data size")
Project: Lightning-AI/pytorch-lightning (FSDPStrategy)
What hung: "each trainer can have different data size ... rank 5 ran out of data after batch 50,
while other ranks still have data. But the program got stuck." Every validation step is
collective twice over -- the FSDP forward all-gathers parameters and `self.log_dict(...,
sync_dist=True)` reduces the losses -- so the rank whose shard ran out left the loop while the
others waited for it in the next step's collectives.
Fix: give every rank the same number of validation batches (Lightning's DistributedSampler over a
map-style dataset, which pads the last shard), instead of sharding the files by hand. The thread
is open; this is the standard remedy for the cause the reporter identified.
Expected rankcheck finding: RC103 on the `self.log_dict(..., sync_dist=True)` inside the
validation loop, whose length differs per rank (hand-sharded files).
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
        self.log_dict(  # expect: RC103
            {f"val_loss/{key}": loss for key, loss in loss_dict.items()},
            on_step=False,
            on_epoch=True,
            sync_dist=True,
        )
        return loss_dict

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr)
