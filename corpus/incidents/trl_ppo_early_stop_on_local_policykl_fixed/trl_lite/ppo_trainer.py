"""PPOTrainer (trl/trainer/ppo_trainer.py, trl 0.4.1), trimmed to the path of `step` for a
decoder-only policy with a value head under `accelerate launch --multi_gpu`."""
import time
from typing import List

import torch
from accelerate import Accelerator
from datasets import Dataset
from trl.core import (AdaptiveKLController, clip_by_value, entropy_from_logits, logprobs_from_logits,
                      masked_mean, masked_whiten, stack_dicts)

from trl_lite.ppo_config import PPOConfig


class PPOTrainer:
    def __init__(self, config: PPOConfig, model, ref_model, tokenizer, dataset=None, data_collator=None):
        self.config = config
        self.accelerator = Accelerator(log_with=config.log_with,
                                       gradient_accumulation_steps=config.gradient_accumulation_steps)
        self.tokenizer = tokenizer
        self.is_distributed = self.accelerator.distributed_type == "MULTI_GPU"
        optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, model.parameters()),
                                     lr=config.learning_rate)
        self.dataloader = torch.utils.data.DataLoader(dataset, batch_size=config.batch_size,
                                                      collate_fn=data_collator, shuffle=True, drop_last=True)
        self.model, self.optimizer, self.dataloader = self.accelerator.prepare(model, optimizer, self.dataloader)
        self.ref_model = self.accelerator.prepare(ref_model)
        self.current_device = self.accelerator.device
        self.kl_ctl = AdaptiveKLController(config.init_kl_coef, config.target, config.horizon)

    def batched_forward_pass(self, model, queries, responses, return_logits=False):
        input_ids = [torch.cat([q, r]) for q, r in zip(queries, responses)]
        inputs = self.tokenizer.pad({"input_ids": input_ids}, return_tensors="pt").to(self.current_device)
        logits, _, values = model(**inputs)
        logprobs = logprobs_from_logits(logits[:, :-1, :], inputs["input_ids"][:, 1:])
        masks = torch.zeros_like(inputs["attention_mask"][:, :-1])
        for j, (q, r) in enumerate(zip(queries, responses)):
            masks[j, len(q) - 1: len(q) - 1 + len(r)] = 1
        return logprobs, (logits if return_logits else None), values[:, :-1], masks

    def compute_rewards(self, scores, logprobs, ref_logprobs, masks):
        non_score_reward = -self.kl_ctl.value * (logprobs - ref_logprobs)
        rewards = non_score_reward.clone()
        for reward, score, mask in zip(rewards, scores, masks):
            reward[mask.nonzero()[-1]] += score
        return rewards, non_score_reward

    def step(self, queries: List[torch.LongTensor], responses: List[torch.LongTensor],
             scores: List[torch.FloatTensor]):
        """Run a PPO optimisation step given a list of queries, model responses, and rewards."""
        timing = dict()
        t0 = time.time()
        with torch.no_grad():
            all_logprobs, _, values, masks = self.batched_forward_pass(self.model, queries, responses)
            ref_logprobs, _, _, _ = self.batched_forward_pass(self.ref_model, queries, responses)
        rewards, non_score_reward = self.compute_rewards(scores, all_logprobs, ref_logprobs, masks)

        mini_batch_data = Dataset.from_dict({"queries": queries, "responses": responses,
                                             "logprobs": all_logprobs, "values": values,
                                             "rewards": rewards, "masks": masks})
        mini_batch_data.set_format("torch")

        def collator(data):
            return {key: ([d[key] for d in data] if key in ["queries", "responses"]
                          else torch.stack([d[key] for d in data]).to(self.current_device))
                    for key in data[0]}

        mini_batch_dataloader = torch.utils.data.DataLoader(
            mini_batch_data, batch_size=self.config.mini_batch_size, shuffle=True, collate_fn=collator)

        t = time.time()
        all_stats = []
        early_stop = False
        for _ in range(self.config.ppo_epochs):
            if early_stop:
                break
            for batch in mini_batch_dataloader:
                with self.accelerator.accumulate(self.model):
                    logprobs, logits, vpreds, _ = self.batched_forward_pass(
                        self.model, batch["queries"], batch["responses"], return_logits=True)

                train_stats = self.train_minibatch(batch["logprobs"], batch["values"], batch["rewards"],
                                                   logprobs, logits, vpreds, batch["masks"])
                all_stats.append(train_stats)

                if self.config.early_stopping:
                    policykl = train_stats["policy/policykl"]
                    early_stop = self._early_stop(policykl)
                    if early_stop:
                        break
        timing["time/ppo/optimize_step"] = time.time() - t

        train_stats = stack_dicts(all_stats)
        stats = {"objective/kl": masked_mean(all_logprobs - ref_logprobs, masks),
                 "objective/kl_coef": torch.tensor(self.kl_ctl.value, device=self.current_device),
                 "ppo/mean_non_score_reward": masked_mean(non_score_reward, masks)}
        stats.update({f"ppo/{k}": torch.mean(v, dim=0) for k, v in train_stats.items()})
        # Gather/Reduce stats from all processes
        if self.is_distributed:
            stats = self.gather_stats(stats)
        stats = {k: v.cpu().numpy() for k, v in stats.items()}
        self.kl_ctl.update(stats["objective/kl"], self.config.batch_size * self.accelerator.num_processes)
        timing["time/ppo/total"] = time.time() - t0
        stats.update(timing)
        return stats

    def _early_stop(self, policykl):
        """If the policy KL is greater than the target KL, the gradient is zeroed and the
        optimization step is skipped; in the multi-gpu case the policy KL is averaged across all
        processes first."""
        early_stop = False
        if not self.config.early_stopping:
            return early_stop

        if not self.is_distributed and policykl > 1.5 * self.config.target_kl:
            self.optimizer.zero_grad()
            early_stop = True
        elif self.is_distributed:
            import torch.distributed as dist

            # Wait for all processes to finish
            dist.barrier()

            # all gather the policykl
            dist.all_reduce(policykl, dist.ReduceOp.SUM)
            policykl /= self.accelerator.num_processes

            if policykl > 1.5 * self.config.target_kl:
                self.optimizer.zero_grad()
                early_stop = True
        return early_stop

    def gather_stats(self, stats):
        """Gather stats from all processes. Useful in the context of distributed training."""
        import torch.distributed as dist

        # Wait for all processes to finish
        dist.barrier()
        for k, v in stats.items():
            if isinstance(v, torch.Tensor):
                dist.all_reduce(v, dist.ReduceOp.SUM)
                v /= self.accelerator.num_processes
            stats[k] = v
        return stats

    def train_minibatch(self, old_logprobs, values, rewards, logprobs, logits, vpreds, mask):
        loss_p, loss_v, train_stats = self.loss(old_logprobs, values, rewards, logits, vpreds, logprobs, mask)
        self.optimizer.zero_grad()
        self.accelerator.backward(loss_p + loss_v)
        if self.config.max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.max_grad_norm)
        self.optimizer.step()
        return train_stats

    def loss(self, old_logprobs, values, rewards, logits, vpreds, logprobs, mask):
        lastgaelam = 0
        advantages_reversed = []
        gen_len = rewards.shape[-1]
        values, rewards = values * mask, rewards * mask
        for t in reversed(range(gen_len)):
            nextvalues = values[:, t + 1] if t < gen_len - 1 else 0.0
            delta = rewards[:, t] + self.config.gamma * nextvalues - values[:, t]
            lastgaelam = delta + self.config.gamma * self.config.lam * lastgaelam
            advantages_reversed.append(lastgaelam)
        advantages = torch.stack(advantages_reversed[::-1]).transpose(0, 1)
        returns = advantages + values
        advantages = masked_whiten(advantages, mask).detach()

        vpredclipped = clip_by_value(vpreds, values - self.config.cliprange_value,
                                     values + self.config.cliprange_value)
        vf_loss = 0.5 * masked_mean(torch.max((vpreds - returns) ** 2, (vpredclipped - returns) ** 2), mask)
        ratio = torch.exp(logprobs - old_logprobs)
        pg_losses = -advantages * ratio
        pg_losses2 = -advantages * torch.clamp(ratio, 1.0 - self.config.cliprange, 1.0 + self.config.cliprange)
        pg_loss = masked_mean(torch.max(pg_losses, pg_losses2), mask)

        entropy = masked_mean(entropy_from_logits(logits), mask)
        policykl = masked_mean(old_logprobs - logprobs, mask)
        stats = {"loss/policy": pg_loss.detach(), "loss/value": vf_loss.detach(),
                 "policy/entropy": entropy.detach(), "policy/policykl": policykl.detach()}
        return pg_loss, self.config.vf_coef * vf_loss, stats
