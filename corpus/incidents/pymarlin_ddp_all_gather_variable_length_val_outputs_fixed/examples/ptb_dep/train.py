"""Safe twin of pymarlin_ddp_all_gather_variable_length_val_outputs: DDPTrainerBackend's
gather_tensors_on_cpu (pymarlin/core/trainer_backend.py) all-gathers the per-process lengths first,
pads the local tensor to the longest, all-gathers tensors of one shape on every rank and trims each
gathered tensor back to its length, so the flattened per-token predictions of different lengths are
gathered without a shape mismatch.

Thread: https://github.com/microsoft/PyMarlin/issues/55
"""
import torch
import torch.nn as nn
from datasets import load_from_disk
from transformers import AutoModel, AutoTokenizer, DataCollatorForTokenClassification

from pymarlin.core import DDPTrainerBackend, SingleProcess, Trainer, TrainerArguments

NUM_RELS = 46


class DepTagger(nn.Module):
    def __init__(self, encoder="bert-base-cased", data_dir="data/ptb_dep"):
        super().__init__()
        self.tokenizer = AutoTokenizer.from_pretrained(encoder)
        self.encoder = AutoModel.from_pretrained(encoder)
        hidden = self.encoder.config.hidden_size
        self.pointer = nn.Bilinear(hidden, hidden, 1)
        self.rel_head = nn.Linear(hidden, NUM_RELS)
        self.data = load_from_disk(data_dir)
        self.collate_fn = DataCollatorForTokenClassification(self.tokenizer, label_pad_token_id=-100)

    def get_train_dataset(self):
        return self.data["train"]

    def get_val_dataset(self):
        return self.data["validation"]

    def get_optimizer(self):
        return torch.optim.AdamW(self.parameters(), lr=3e-5)

    def forward(self, stage, global_step, batch, device):
        batch = {k: v.to(device) for k, v in batch.items()}
        return self.train_step(batch) if stage == "train" else self.val_step(batch)

    def _losses(self, batch):
        h = self.encoder(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).last_hidden_state
        rel_logits = self.rel_head(h)
        label_loss = nn.functional.cross_entropy(rel_logits.view(-1, NUM_RELS), batch["labels"].view(-1), ignore_index=-100)
        heads = h.gather(1, batch["heads"].clamp(min=0).unsqueeze(-1).expand_as(h))
        pointer_loss = nn.functional.binary_cross_entropy_with_logits(self.pointer(h, heads).squeeze(-1),
                                                                      (batch["heads"] >= 0).float())
        return label_loss, pointer_loss, rel_logits

    def train_step(self, batch):
        label_loss, pointer_loss, _ = self._losses(batch)
        return (label_loss + pointer_loss,)

    def val_step(self, batch):
        label_loss, pointer_loss, rel_logits = self._losses(batch)
        mask = batch["labels"] != -100
        rels_predicted = rel_logits.argmax(-1)[mask]  # 1-D, one entry per real token of this batch
        rels_labels = batch["labels"][mask]
        return label_loss, pointer_loss, rels_predicted, rels_labels

    def on_end_train_epoch(self, epoch, losses):
        print(f"epoch {epoch}: train loss {losses.mean().item():.4f}")

    def on_end_val_epoch(self, epoch, label_loss, pointer_loss, rels_predicted, rels_labels):
        acc = (rels_predicted == rels_labels).float().mean().item()
        print(f"epoch {epoch}: val label loss {label_loss.mean().item():.4f} rel acc {acc:.4f}")


if __name__ == "__main__":
    import os

    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    args = TrainerArguments(epochs=3, local_rank=local_rank, device=local_rank)
    backend = DDPTrainerBackend(SingleProcess()) if int(os.environ.get("WORLD_SIZE", 1)) > 1 else SingleProcess()
    Trainer(DepTagger(), backend, args).train()
