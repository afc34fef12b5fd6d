"""Safe twin of trl_grpo_user_metric_keys_logged_per_rank: the processes agree on the metric names
first (every process's names gathered, their sorted union iterated everywhere), and a process that
did not log a name contributes (0, 0) to its gather (the PR's fix).

Thread: https://github.com/huggingface/trl/issues/7310
"""
import re
from collections import defaultdict

import torch
from accelerate import Accelerator
from accelerate.utils import gather_object


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
        all_names = sorted(set(gather_object(sorted(self._pending_metrics))))
        for name in all_names:
            values = self._pending_metrics.get(name, [])
            local = torch.tensor([sum(values), float(len(values))], device=device)
            total = self.accelerator.gather(local).view(-1, 2).sum(dim=0)
            if total[1] > 0:
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
