"""Trimmed copy of transformers.Trainer's evaluation loop (4.46-era): per step, the model outputs go
through `preprocess_logits_for_metrics`, are padded across processes along dim 1 and gathered with
`accelerator.gather_for_metrics`."""
import numpy as np
import torch
from transformers import Trainer
from transformers.trainer_utils import EvalLoopOutput


class PRMTrainer(Trainer):
    def evaluation_loop(self, dataloader, description, prediction_loss_only=None, ignore_keys=None, metric_key_prefix="eval"):
        model = self._wrap_model(self.model, training=False, dataloader=dataloader)
        model.eval()
        all_preds, all_labels, all_losses = [], [], []
        observed = 0
        for step, inputs in enumerate(dataloader):
            observed += inputs["input_ids"].shape[0]
            loss, logits, labels = self.prediction_step(model, inputs, prediction_loss_only, ignore_keys=ignore_keys)
            if loss is not None:
                losses = self.gather_function(loss.repeat(inputs["input_ids"].shape[0]))
                all_losses.append(losses.cpu())
            if logits is not None and self.preprocess_logits_for_metrics is not None:
                logits = self.preprocess_logits_for_metrics(logits, labels)
            if logits is not None:
                # pads along dim 1 only; 1-D tensors are returned unchanged
                logits = self.accelerator.pad_across_processes(logits, dim=1, pad_index=-100)
                logits = self.gather_function((logits))
                all_preds.append(logits)
            if labels is not None:
                labels = self.accelerator.pad_across_processes(labels, dim=1, pad_index=-100)
                labels = self.gather_function((labels))
                all_labels.append(labels)

        def _cat(chunks):
            if not chunks:
                return None
            if isinstance(chunks[0], (tuple, list)):
                return tuple(torch.cat([c[i] for c in chunks]).float().cpu().numpy() for i in range(len(chunks[0])))
            return torch.cat(chunks).float().cpu().numpy()

        preds, label_ids = _cat(all_preds), _cat(all_labels)
        metrics = {}
        if self.compute_metrics is not None and preds is not None:
            metrics = self.compute_metrics((preds, label_ids))
        if all_losses:
            metrics["loss"] = float(torch.cat(all_losses).mean())
        metrics = {f"{metric_key_prefix}_{k}" if not k.startswith(metric_key_prefix) else k: v for k, v in metrics.items()}
        return EvalLoopOutput(predictions=preds, label_ids=label_ids, metrics=metrics, num_samples=observed)
