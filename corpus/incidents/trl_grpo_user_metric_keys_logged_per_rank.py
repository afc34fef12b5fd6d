"""trl's GRPOTrainer lets reward functions log scalar metrics (`log_metric`); the trainer averages
each pending metric across processes with one `accelerator.gather` per metric name, in the order
of this rank's own names.

Thread: https://github.com/huggingface/trl/issues/7310 ("Distributed deadlock and metric corruption in GRPOTrainer and RLOOTrainer when conditionally logging metrics/extra columns"), fix proposed in https://github.com/huggingface/trl/pull/7311
Project: huggingface/trl
What hung: a reward function logs a metric only when its completions show it (a format matched,
a prompt category seen), so one process has `format_accuracy` in `_pending_metrics` and another
does not; `_flush_user_logs` iterates `sorted(self._pending_metrics)` and the process with the
extra name enters `accelerator.gather` alone, "permanently hanging the training run at the
collective".
Fix (the PR): gather every process's metric names first (`gather_object`), iterate their sorted
union on every process, and contribute (0, 0) for a name this process did not log.
Expected rankcheck finding: RC103 on the loop over this rank's pending metric names.
(The trainer is reduced to the logging path; names follow the thread.)
"""
import re
from collections import defaultdict

import torch
from accelerate import Accelerator


def format_reward(prompts, completions, log_metric=None, **kwargs):
    scores = [1.0 if re.match(r"^<think>.*?</think>", completion, re.DOTALL) else 0.0 for completion in completions]
    if log_metric is not None and any(scores):
        log_metric("format_accuracy", sum(scores) / len(scores))
    return scores


class GRPOTrainer:
    def __init__(self, model, reward_funcs, train_loader):
        self.accelerator = Accelerator()
        self.model, self.train_loader = self.accelerator.prepare(model, train_loader)
        self.reward_funcs = reward_funcs
        self._pending_metrics = defaultdict(list)
        self._metrics = defaultdict(list)

    def _log_metric(self, name, value):
        self._pending_metrics[name].append(value)

    def _score(self, prompts, completions):
        device = self.accelerator.device
        rewards = [torch.tensor(func(prompts=prompts, completions=completions, log_metric=self._log_metric), device=device)
                   for func in self.reward_funcs]
        return torch.stack(rewards, dim=1).sum(dim=1)

    def _flush_user_logs(self):
        device = self.accelerator.device
        for name in sorted(self._pending_metrics):  # expect: RC103
            values = self._pending_metrics[name]
            local = torch.tensor([sum(values), float(len(values))], device=device)
            total = self.accelerator.gather(local).view(-1, 2).sum(dim=0)
            self._metrics[name].append((total[0] / total[1]).item())
        self._pending_metrics.clear()

    def train(self, tokenizer, optimizer):
        for batch in self.train_loader:
            prompts = batch["prompt"]
            outputs = self.model.generate(batch["input_ids"], max_new_tokens=64)
            completions = tokenizer.batch_decode(outputs, skip_special_tokens=True)
            rewards = self._score(prompts, completions)
            loss = -(rewards.mean() * self.model(batch["input_ids"]).logits.mean())
            self.accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            self._flush_user_logs()
