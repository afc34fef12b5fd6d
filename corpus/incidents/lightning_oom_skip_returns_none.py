"""Graph-molecule model in the lightning-hydra-template: `training_step` catches CUDA out-of-memory
on oversized batches and returns None to skip the batch.

Thread: https://github.com/ashleve/lightning-hydra-template/issues/652 ("How to skip the batch when OOM happens?")
Project: ashleve/lightning-hydra-template (Lightning DDP)
What hung: returning None makes Lightning skip backward and the optimizer step for that batch --
on the rank that hit the OOM only. The other ranks run backward, whose DDP gradient all-reduce
waits for the rank that skipped ("when I run the code on multiple GPUs, it stops when return None
... such trick can only be played on single GPU", the reporter).
Fix (the multi-rank version of the same skip, e.g. HannesStark/FlowSite#1: "skips all batches
amongst all ranks if any rank had to skip its batch"): agree on the OOM with a reduction that
every rank reaches, and skip the batch on every rank together.
Expected rankcheck finding: RC105 on the `except` that swallows a per-rank OOM and skips the
step's collectives on that rank only.
"""
import lightning as L
import torch
import torch.nn.functional as F


class GraphLitModule(L.LightningModule):
    def __init__(self, net: torch.nn.Module, lr: float = 1e-3):
        super().__init__()
        self.save_hyperparameters(logger=False, ignore=["net"])
        self.net = net

    def model_step(self, batch):
        pred = self.net(batch.x, batch.edge_index, batch.batch)
        return F.l1_loss(pred, batch.y)

    def training_step(self, batch, batch_idx):
        try:
            loss = self.model_step(batch)
        except torch.cuda.OutOfMemoryError:  # expect: RC105
            print(f"OOM on batch {batch_idx} with {batch.num_nodes} nodes, skipping")
            torch.cuda.empty_cache()
            return None
        self.log("train/loss", loss, on_step=False, on_epoch=True, prog_bar=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)
