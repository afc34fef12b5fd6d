"""Retrieval-style validation in Lightning: each rank keeps the embeddings of the validation samples
it saw and `on_validation_epoch_end` all-gathers them to score every query against every
candidate. The ranks' tensors have different lengths along the first dimension.

Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/7773 ("Enable all_gather to work for Tensors with different shapes along the first dimension")
Project: Lightning-AI/pytorch-lightning
What hung: "if tensors passed to `all_gather` are of different dimensions on different devices, the
code freezes and GPU spikes to 100% ... Since no error is given, it is also difficult to debug."
An all-gather needs the same shape on every rank.
Fix (the recipe in the thread, later built into Lightning's gather_all_tensors by PR #12630): gather
the sizes first, pad every tensor to the largest size, gather the padded tensors, then cut each
rank's part back to its own length.
Expected rankcheck finding: RC104 on the `self.all_gather(...)` whose tensor length is the number of
samples this rank happened to see.
"""
import lightning as L
import torch
import torch.nn.functional as F


class DualEncoder(L.LightningModule):
    def __init__(self, encoder: torch.nn.Module):
        super().__init__()
        self.encoder = encoder
        self._val_queries = []
        self._val_docs = []

    def training_step(self, batch, batch_idx):
        q = F.normalize(self.encoder(batch["query"]), dim=-1)
        d = F.normalize(self.encoder(batch["doc"]), dim=-1)
        loss = F.cross_entropy(q @ d.T / 0.05, torch.arange(len(q), device=self.device))
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        keep = batch["is_valid"].bool()
        self._val_queries.append(F.normalize(self.encoder(batch["query"][keep]), dim=-1))
        self._val_docs.append(F.normalize(self.encoder(batch["doc"][keep]), dim=-1))

    def on_validation_epoch_end(self):
        queries = torch.cat(self._val_queries)
        docs = torch.cat(self._val_docs)
        all_queries = self.all_gather(queries).flatten(0, 1)  # expect: RC104
        all_docs = self.all_gather(docs).flatten(0, 1)  # expect: RC104
        ranks = (all_queries @ all_docs.T).argsort(dim=-1, descending=True)
        hits = (ranks[:, :10] == torch.arange(len(all_queries), device=self.device)[:, None]).any(-1).float()
        self.log("val_recall@10", hits.mean(), rank_zero_only=True)
        self._val_queries.clear()
        self._val_docs.clear()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=2e-5)
