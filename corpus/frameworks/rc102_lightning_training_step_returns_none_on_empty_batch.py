"""Lightning: `training_step` skips a batch whose samples were all filtered out by returning
None. Under automatic optimization Lightning then skips backward on that rank only; the other
ranks run backward on their loss, whose DDP gradient all-reduce waits for the rank that skipped.
The training_step docstring says so: returning None is "not supported for multi-GPU or TPU".
"""
import lightning as L
import torch
import torch.nn.functional as F


class SpanTagger(L.LightningModule):
    def __init__(self, encoder: torch.nn.Module, num_tags: int):
        super().__init__()
        self.encoder = encoder
        self.head = torch.nn.Linear(encoder.hidden_size, num_tags)

    def training_step(self, batch, batch_idx):
        keep = batch["labels"] != -100
        if not keep.any():
            return None  # expect: RC102
        logits = self.head(self.encoder(batch["input_ids"]))
        return F.cross_entropy(logits[keep], batch["labels"][keep])

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=2e-5)
