"""Safe twin of pytorch_accelerated_gather_uneven_last_eval_batch: predictions and labels are gathered
with a `padding_value` (padded to the same length across processes first), and the padding is
dropped after the gather (the PR's advice).

Thread: https://github.com/Chris-hughes10/pytorch-accelerated/pull/53
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
        gathered_preds = self.gather(preds, padding_value=-1).cpu()
        gathered_labels = self.gather(labels, padding_value=-1).cpu()
        keep = gathered_labels != -1
        self.eval_preds.append(gathered_preds[keep])
        self.eval_labels.append(gathered_labels[keep])
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
