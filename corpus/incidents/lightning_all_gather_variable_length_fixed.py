"""Safe twin of lightning_all_gather_variable_length.py: the lengths are gathered first, every rank
pads to the longest, the padded tensors are gathered, and each part is cut back to its length.

Thread: https://github.com/Lightning-AI/pytorch-lightning/issues/7773
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

    def _gather_variable(self, t: torch.Tensor) -> torch.Tensor:
        length = torch.tensor([t.shape[0]], device=self.device)
        lengths = self.all_gather(length).flatten()
        longest = int(lengths.max().item())
        padded = torch.zeros((longest,) + tuple(t.shape[1:]), device=t.device, dtype=t.dtype)
        padded[: t.shape[0]] = t
        gathered = self.all_gather(padded)
        return torch.cat([gathered[i, : int(n)] for i, n in enumerate(lengths)])

    def on_validation_epoch_end(self):
        queries = torch.cat(self._val_queries)
        docs = torch.cat(self._val_docs)
        all_queries = self._gather_variable(queries)
        all_docs = self._gather_variable(docs)
        ranks = (all_queries @ all_docs.T).argsort(dim=-1, descending=True)
        hits = (ranks[:, :10] == torch.arange(len(all_queries), device=self.device)[:, None]).any(-1).float()
        self.log("val_recall@10", hits.mean(), rank_zero_only=True)
        self._val_queries.clear()
        self._val_docs.clear()

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=2e-5)
