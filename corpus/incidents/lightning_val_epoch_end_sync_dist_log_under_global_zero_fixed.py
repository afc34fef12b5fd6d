"""Safe twin of lightning_val_epoch_end_sync_dist_log_under_global_zero.py: the per-rank
projections and cluster ids are gathered on every rank with `self.all_gather`, the metric over the
whole validation set is computed on every rank, and every rank makes the same
`self.log(..., sync_dist=True)` calls; the buffers are cleared on every rank.

Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/19783
"""
import lightning as L
import torch
import torch.nn.functional as F
from pytorch_metric_learning import losses
from transformers import AutoModel


class ClusterContrastiveModule(L.LightningModule):
    def __init__(self, backbone="facebook/esm2_t12_35M_UR50D", proj_dim=128, lr=2e-5):
        super().__init__()
        self.save_hyperparameters()
        self.encoder = AutoModel.from_pretrained(backbone)
        self.proj = torch.nn.Linear(self.encoder.config.hidden_size, proj_dim)
        self.loss_func = losses.SupConLoss(temperature=0.1)
        self.validation_step_outputs = []
        self.validation_step_clusters = []

    def _common_step(self, batch_tokens):
        hidden = self.encoder(**batch_tokens).last_hidden_state
        mask = batch_tokens["attention_mask"].unsqueeze(-1)
        pooled = (hidden * mask).sum(1) / mask.sum(1)
        return F.normalize(self.proj(pooled), dim=-1)

    def training_step(self, batch, batch_idx):
        batch_tokens, cluster_ids = batch["tokens"], batch["cluster_ids"]
        loss = self.loss_func(self._common_step(batch_tokens), cluster_ids)
        self.log("train_loss", loss, on_step=True, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        # integer cluster ids from the datamodule's fixed vocabulary, identical on every rank
        batch_tokens, cluster_ids = batch["tokens"], batch["cluster_ids"]
        projection = self._common_step(batch_tokens)
        self.validation_step_outputs.append(projection)
        self.validation_step_clusters.append(cluster_ids)

    @staticmethod
    def _cal_accuracy(embeddings, labels):
        sim = embeddings @ embeddings.T
        sim.fill_diagonal_(-float("inf"))
        nearest = sim.argmax(dim=1)
        return (labels[nearest] == labels).float().mean()

    def on_validation_epoch_end(self):
        local_preds = torch.cat(self.validation_step_outputs, dim=0)
        local_clusters = torch.cat(self.validation_step_clusters, dim=0)
        self.validation_step_outputs.clear()
        self.validation_step_clusters.clear()

        # every rank gathers the whole validation set (DistributedSampler pads ranks to equal size)
        all_preds = self.all_gather(local_preds).flatten(0, 1)
        all_clusters = self.all_gather(local_clusters).flatten(0, 1)

        loss = self.loss_func(all_preds, all_clusters)
        accuracy = self._cal_accuracy(all_preds, all_clusters)
        self.log("val_loss", loss, prog_bar=True, sync_dist=True)
        self.log("val_acc", accuracy, prog_bar=True, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)


def main(datamodule):
    model = ClusterContrastiveModule()
    checkpoint = L.pytorch.callbacks.ModelCheckpoint(monitor="val_acc", mode="max", save_top_k=2)
    trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp", max_epochs=10,
                        precision="bf16-mixed", callbacks=[checkpoint])
    trainer.fit(model, datamodule=datamodule)
