"""Contrastive fine-tuning of a protein language model with PyTorch Lightning (DDP): every validation
batch's projections and cluster labels are kept, and at the end of the validation epoch a
cluster-level metric over the whole validation set is computed and logged.

Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/19783 ("DDP strategy doesn't work for on_validation_epoch_end, always hang")
Project: Lightning-AI/pytorch-lightning
What hung: `on_validation_epoch_end` computed the metric "based on entire validation dataset" under
`if self.trainer.is_global_zero:` and logged it there. `self.log(..., sync_dist=True)` reduces the
value across processes, so the reduction ran on global rank 0 only while the other ranks had
already left the hook and moved on (the next training step's DDP all-reduce, or the
ModelCheckpoint broadcast), and validation "always hangs" under the DDP strategy (fine on one GPU).
Fix (Lightning's documented remedy for logging from one rank / for epoch-level metrics on the full
set): gather the per-rank outputs on every rank with `self.all_gather`, compute the metric on every
rank and log it from every rank (or, if the logging really is done from rank 0 only, log with
`rank_zero_only=True` and no sync).
Expected rankcheck finding: RC101 on the two `self.log(..., sync_dist=True)` calls inside the
`self.trainer.is_global_zero` block.
Inferred: the backbone, the loss (SupCon from pytorch-metric-learning), `_cal_accuracy` and the two
`self.log` calls (the issue's snippet is cut right after the accuracy line; its "logging" label and
the reporter's comment on Lightning#19604 point to the logging inside the rank-0 block).
"""
import itertools

import lightning as L
import torch
import torch.nn.functional as F
from pytorch_metric_learning import losses
from sklearn.preprocessing import LabelEncoder
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
        batch_tokens, clusters = batch["tokens"], batch["clusters"]
        projection = self._common_step(batch_tokens)
        self.validation_step_outputs.append(projection)
        self.validation_step_clusters.append(clusters)

    @staticmethod
    def _cal_accuracy(embeddings, labels):
        sim = embeddings @ embeddings.T
        sim.fill_diagonal_(-float("inf"))
        nearest = sim.argmax(dim=1)
        return (labels[nearest] == labels).float().mean()

    def on_validation_epoch_end(self):
        if self.trainer.is_global_zero:  # Check if this is the rank 0 process
            all_preds = torch.cat(self.validation_step_outputs, dim=0)
            all_clusters = LabelEncoder().fit_transform(list(itertools.chain.from_iterable(self.validation_step_clusters)))
            all_clusters = torch.tensor(all_clusters, device=all_preds.device)

            self.validation_step_outputs.clear()
            self.validation_step_clusters.clear()

            loss = self.loss_func(all_preds, all_clusters)
            accuracy = self._cal_accuracy(all_preds, all_clusters)
            self.log("val_loss", loss, prog_bar=True, sync_dist=True)  # expect: RC101
            self.log("val_acc", accuracy, prog_bar=True, sync_dist=True)  # expect: RC101

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.hparams.lr)


def main(datamodule):
    model = ClusterContrastiveModule()
    checkpoint = L.pytorch.callbacks.ModelCheckpoint(monitor="val_acc", mode="max", save_top_k=2)
    trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp", max_epochs=10,
                        precision="bf16-mixed", callbacks=[checkpoint])
    trainer.fit(model, datamodule=datamodule)
