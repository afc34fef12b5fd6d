"""ORPO trainer (TRL trl/trainer/orpo_trainer.py at 4871c82 with #3069 applied, trimmed to decoder-only models)."""

from collections import defaultdict
from dataclasses import dataclass
from typing import Literal, Optional, Union

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import Trainer, TrainingArguments


@dataclass
class ORPOConfig(TrainingArguments):
    beta: float = 0.1
    max_length: int = 1024
    max_prompt_length: int = 512
    label_pad_token_id: int = -100
    remove_unused_columns: bool = False


def pad_to_length(tensor: torch.Tensor, length: int, pad_value: Union[int, float], dim: int = -1) -> torch.Tensor:
    if tensor.size(dim) >= length:
        return tensor
    pad_size = list(tensor.shape)
    pad_size[dim] = length - tensor.size(dim)
    return torch.cat([tensor, pad_value * torch.ones(*pad_size, dtype=tensor.dtype, device=tensor.device)], dim=dim)


class ORPOTrainer(Trainer):
    def __init__(self, model, args: ORPOConfig, data_collator, train_dataset, eval_dataset=None,
                 processing_class=None):
        super().__init__(model=model, args=args, data_collator=data_collator, train_dataset=train_dataset,
                         eval_dataset=eval_dataset, processing_class=processing_class)
        self.beta = args.beta
        self.label_pad_token_id = args.label_pad_token_id
        self.padding_value = processing_class.pad_token_id
        self._stored_metrics = defaultdict(lambda: defaultdict(list))

    @staticmethod
    def concatenated_inputs(batch, label_pad_token_id=-100, padding_value=0, device=None):
        """Concatenate the chosen and rejected inputs into a single tensor, padded to the longer of the two."""
        concatenated_batch = {}
        max_length = max(batch["chosen_input_ids"].shape[1], batch["rejected_input_ids"].shape[1])
        for k in batch:
            if k.startswith("chosen") and isinstance(batch[k], torch.Tensor):
                pad_value = label_pad_token_id if "labels" in k else (padding_value if k.endswith("_input_ids") else 0)
                concatenated_batch[k.replace("chosen", "concatenated")] = pad_to_length(batch[k], max_length, pad_value)
        for k in batch:
            if k.startswith("rejected") and isinstance(batch[k], torch.Tensor):
                pad_value = label_pad_token_id if "labels" in k else (padding_value if k.endswith("_input_ids") else 0)
                key = k.replace("rejected", "concatenated")
                concatenated_batch[key] = torch.cat(
                    (concatenated_batch[key], pad_to_length(batch[k], max_length, pad_value)), dim=0
                ).to(device=device)
        return concatenated_batch

    def odds_ratio_loss(self, policy_chosen_logps, policy_rejected_logps):
        log_odds = (policy_chosen_logps - policy_rejected_logps) - (
            torch.log1p(-torch.exp(policy_chosen_logps)) - torch.log1p(-torch.exp(policy_rejected_logps))
        )
        ratio = F.logsigmoid(log_odds)
        losses = self.beta * ratio
        chosen_rewards = self.beta * (policy_chosen_logps.to(self.accelerator.device)).detach()
        rejected_rewards = self.beta * (policy_rejected_logps.to(self.accelerator.device)).detach()
        return losses, chosen_rewards, rejected_rewards, torch.mean(ratio), torch.mean(log_odds)

    @staticmethod
    def get_batch_logps(logits, labels, average_log_prob=False, label_pad_token_id=-100):
        labels = labels[:, 1:].clone()
        logits = logits[:, :-1, :]
        loss_mask = labels != label_pad_token_id
        labels = torch.where(labels == label_pad_token_id, 0, labels)
        per_token_logps = torch.gather(logits.log_softmax(-1), dim=2, index=labels.unsqueeze(2)).squeeze(2)
        if average_log_prob:
            return (per_token_logps * loss_mask).sum(-1) / loss_mask.sum(-1)
        return (per_token_logps * loss_mask).sum(-1)

    def concatenated_forward(self, model: nn.Module, batch):
        concatenated_batch = self.concatenated_inputs(
            batch, label_pad_token_id=self.label_pad_token_id, padding_value=self.padding_value,
            device=self.accelerator.device,
        )
        len_chosen = batch["chosen_labels"].shape[0]
        outputs = model(
            concatenated_batch["concatenated_input_ids"],
            attention_mask=concatenated_batch["concatenated_attention_mask"],
            use_cache=False,
        )
        all_logits = outputs.logits

        def cross_entropy_loss(logits, labels):
            logits = logits[..., :-1, :].contiguous()
            labels = labels[..., 1:].contiguous()
            return nn.CrossEntropyLoss()(logits.view(-1, logits.shape[-1]), labels.view(-1).to(logits.device))

        labels = concatenated_batch["concatenated_input_ids"].clone()
        labels = torch.where(concatenated_batch["concatenated_attention_mask"] == 1, labels, self.label_pad_token_id)
        chosen_nll_loss = cross_entropy_loss(all_logits[:len_chosen], labels[:len_chosen])

        all_logps = self.get_batch_logps(all_logits, concatenated_batch["concatenated_labels"],
                                         average_log_prob=True, label_pad_token_id=self.label_pad_token_id)
        chosen_logps, rejected_logps = all_logps[:len_chosen], all_logps[len_chosen:]
        # [batch, this batch's padded length - 1, vocab]
        chosen_logits = all_logits[:len_chosen, :-1, :]
        rejected_logits = all_logits[len_chosen:, :-1, :]
        return chosen_logps, rejected_logps, chosen_logits, rejected_logits, chosen_nll_loss

    def get_batch_loss_metrics(self, model, batch, train_eval: Literal["train", "eval"] = "train"):
        """Compute the ORPO loss and other metrics for the given batch of inputs for train or test."""
        metrics = {}
        (
            policy_chosen_logps,
            policy_rejected_logps,
            policy_chosen_logits,
            policy_rejected_logits,
            policy_nll_loss,
        ) = self.concatenated_forward(model, batch)

        losses, chosen_rewards, rejected_rewards, log_odds_ratio, log_odds_chosen = self.odds_ratio_loss(
            policy_chosen_logps, policy_rejected_logps
        )
        # full ORPO loss
        loss = policy_nll_loss - losses.mean()
        reward_accuracies = (chosen_rewards > rejected_rewards).float()

        prefix = "eval_" if train_eval == "eval" else ""
        metrics[f"{prefix}rewards/chosen"] = self.accelerator.gather_for_metrics(chosen_rewards).mean()
        metrics[f"{prefix}rewards/rejected"] = self.accelerator.gather_for_metrics(rejected_rewards).mean()
        metrics[f"{prefix}rewards/accuracies"] = self.accelerator.gather_for_metrics(reward_accuracies).mean()
        metrics[f"{prefix}rewards/margins"] = self.accelerator.gather_for_metrics(
            chosen_rewards - rejected_rewards
        ).mean()
        metrics[f"{prefix}logps/rejected"] = self.accelerator.gather_for_metrics(policy_rejected_logps).detach().mean()
        metrics[f"{prefix}logps/chosen"] = self.accelerator.gather_for_metrics(policy_chosen_logps).detach().mean()
        metrics[f"{prefix}logits/rejected"] = self.accelerator.gather_for_metrics(
            policy_rejected_logits.detach().mean()
        ).mean()
        metrics[f"{prefix}logits/chosen"] = self.accelerator.gather_for_metrics(
            policy_chosen_logits.detach().mean()
        ).mean()
        metrics[f"{prefix}nll_loss"] = self.accelerator.gather_for_metrics(policy_nll_loss).detach().mean()
        metrics[f"{prefix}log_odds_ratio"] = self.accelerator.gather_for_metrics(log_odds_ratio).detach().mean()
        metrics[f"{prefix}log_odds_chosen"] = self.accelerator.gather_for_metrics(log_odds_chosen).detach().mean()
        for k, v in metrics.items():
            metrics[k] = v.item()
        return loss, metrics

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        loss, metrics = self.get_batch_loss_metrics(model, inputs, train_eval="train")
        loss = loss.to(self.args.device)
        self.store_metrics(metrics, train_eval="train")
        if return_outputs:
            return loss, metrics
        return loss

    def store_metrics(self, metrics: dict[str, float], train_eval: Literal["train", "eval"] = "train") -> None:
        for key, value in metrics.items():
            self._stored_metrics[train_eval][key].append(value)

    def log(self, logs: dict[str, float], start_time: Optional[float] = None) -> None:
        train_eval = "train" if "loss" in logs else "eval"
        for key, metrics in self._stored_metrics[train_eval].items():
            logs[key] = torch.tensor(metrics).mean().item()
        del self._stored_metrics[train_eval]
        return super().log(logs, start_time)
