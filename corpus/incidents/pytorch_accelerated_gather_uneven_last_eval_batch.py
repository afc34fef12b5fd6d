"""Image classifier evaluated with pytorch-accelerated's Trainer on several GPUs: every eval batch's
predictions and labels are gathered across processes, and the last batch is shorter on some ranks.

Thread: https://github.com/Chris-hughes10/pytorch-accelerated/pull/53 ("Improve reporting of issues with batch size on distributed evaluate")
Project: Chris-hughes10/pytorch-accelerated
What hung: on multi-GPU `Trainer.evaluate`, the eval dataset size and batch size leave one process
with a different number of samples in the last batch (or none). The per-batch `Trainer.gather` then
all-gathers tensors whose first dimension differs between processes, and "that will freeze the run
without any kind of reporting".
Fix (the PR, merged): pass a `padding_value` to `Trainer.gather` (which pads across processes before
gathering, then the padding is dropped); the PR warns when it is missing and raises when a process
would get an empty last batch.
Expected rankcheck finding: RC104 on each `self.gather(...)` whose argument's first dimension is the
per-rank last-batch size.
(The callback and accuracy computation are reconstructed; the thread names Trainer.gather.)
"""
import argparse

import torch
from pytorch_accelerated import Trainer
from pytorch_accelerated.callbacks import TrainerCallback


class CollectPredictionsTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.eval_preds = []
        self.eval_labels = []

    def eval_epoch_start(self):
        super().eval_epoch_start()
        self.eval_preds, self.eval_labels = [], []

    def calculate_eval_batch_loss(self, batch):
        images, labels = batch
        with torch.no_grad():
            logits = self.model(images)
            val_loss = self.loss_func(logits, labels)
        preds = logits.argmax(dim=-1)
        self.eval_preds.append(self.gather(preds).cpu())  # expect: RC104
        self.eval_labels.append(self.gather(labels).cpu())  # expect: RC104
        return {"loss": val_loss, "model_outputs": logits, "batch_size": images.size(0)}


class AccuracyCallback(TrainerCallback):
    def on_eval_epoch_end(self, trainer, **kwargs):
        preds = torch.cat(trainer.eval_preds)
        labels = torch.cat(trainer.eval_labels)
        trainer.run_history.update_metric("accuracy", (preds == labels).float().mean().item())


def main(model, train_dataset, eval_dataset):
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-4)
    args = parser.parse_args()

    trainer = CollectPredictionsTrainer(
        model=model,
        loss_func=torch.nn.CrossEntropyLoss(),
        optimizer=torch.optim.AdamW(model.parameters(), lr=args.lr),
        callbacks=(AccuracyCallback(),),
    )
    trainer.train(
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        num_epochs=args.epochs,
        per_device_batch_size=args.batch_size,
    )
