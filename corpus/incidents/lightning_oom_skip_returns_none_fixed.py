"""Safe twin of lightning_oom_skip_returns_none.py: the out-of-memory flag is reduced across ranks
(every rank reaches the reduction), and when any rank ran out of memory every rank skips the batch.

Thread: https://github.com/ashleve/lightning-hydra-template/issues/652 (fix pattern from
HannesStark/FlowSite#1)
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
        oom = torch.zeros(1, device=self.device)
        loss = None
        try:
            loss = self.model_step(batch)
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            oom.fill_(1.0)
        oom = self.trainer.strategy.reduce(oom, reduce_op=torch.distributed.ReduceOp.MAX)
        if oom.item() > 0:
            print(f"OOM on some rank at batch {batch_idx}, every rank skips it")
            return None
        self.log("train/loss", loss, on_step=False, on_epoch=True, prog_bar=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)
