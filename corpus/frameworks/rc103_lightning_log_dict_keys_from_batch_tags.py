"""Lightning: per-task accuracies logged with one `log_dict(..., sync_dist=True)` at epoch end,
their keys taken from the task tags of the batches this rank saw. With `sync_dist=True` every key
is reduced by a collective of its own, so a rank that saw a task the others did not (a sharded
multi-task set) issues one reduction more, and the ranks stop pairing up.
"""
import lightning as L
import torch


class MultiTaskModule(L.LightningModule):
    def __init__(self, encoder: torch.nn.Module):
        super().__init__()
        self.encoder = encoder
        self.correct = {}
        self.total = {}

    def validation_step(self, batch, batch_idx):
        preds = self.encoder(batch["x"]).argmax(-1)
        for task, pred, label in zip(batch["task"], preds, batch["y"]):
            self.correct[task] = self.correct.get(task, 0.0) + float(pred == label)
            self.total[task] = self.total.get(task, 0.0) + 1.0

    def on_validation_epoch_end(self):
        accuracies = {f"val_acc/{task}": self.correct[task] / self.total[task] for task in self.total}
        self.log_dict(accuracies, sync_dist=True)  # expect: RC103
        self.correct.clear()
        self.total.clear()
