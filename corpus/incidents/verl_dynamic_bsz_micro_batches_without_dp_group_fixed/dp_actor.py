"""Safe twin of verl_dynamic_bsz_micro_batches_without_dp_group/dp_actor.py: as in verl#5591, both
calls to `prepare_dynamic_batch` pass `dp_group=torch.distributed.group.WORLD`, so the number of
micro-batches is all-reduced (MAX) across the data-parallel ranks and every rank runs the same
number of FSDP forwards and backwards.

Thread: https://github.com/verl-project/verl/pull/5591
"""
from collections import defaultdict

import torch
import torch.nn.functional as F
from tensordict import TensorDict

from seqlen_balancing import prepare_dynamic_batch, restore_dynamic_batch


def logprobs_from_logits(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    return torch.gather(F.log_softmax(logits.float(), dim=-1), -1, labels.unsqueeze(-1)).squeeze(-1)


def masked_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (values * mask).sum() / mask.sum().clamp_min(1)


def compute_policy_loss(old_log_prob, log_prob, advantages, response_mask, clip_ratio: float):
    ratio = torch.exp(log_prob - old_log_prob)
    pg_losses = -advantages * ratio
    pg_losses_clipped = -advantages * torch.clamp(ratio, 1.0 - clip_ratio, 1.0 + clip_ratio)
    return masked_mean(torch.maximum(pg_losses, pg_losses_clipped), response_mask)


class DataParallelPPOActor:
    def __init__(self, config, actor_module, actor_optimizer=None):
        self.config = config
        self.actor_module = actor_module  # an FSDP-wrapped causal LM (see fsdp_workers.py)
        self.actor_optimizer = actor_optimizer
        self.use_dynamic_bsz = config.use_dynamic_bsz

    def _forward_micro_batch(self, micro_batch: TensorDict, temperature: float) -> torch.Tensor:
        responses = micro_batch["responses"]
        response_length = responses.size(-1)
        output = self.actor_module(
            input_ids=micro_batch["input_ids"],
            attention_mask=micro_batch["attention_mask"],
            position_ids=micro_batch["position_ids"],
            use_cache=False,
        )
        logits = output.logits[:, -response_length - 1:-1, :].div_(temperature)
        return logprobs_from_logits(logits, responses)

    def _optimizer_step(self) -> torch.Tensor:
        grad_norm = self.actor_module.clip_grad_norm_(max_norm=self.config.grad_clip)
        if not torch.isfinite(grad_norm):
            self.actor_optimizer.zero_grad()
        else:
            self.actor_optimizer.step()
        return grad_norm

    def compute_log_prob(self, data: TensorDict, temperature: float) -> torch.Tensor:
        self.actor_module.eval()
        if self.use_dynamic_bsz:
            max_token_len = self.config.ppo_max_token_len_per_gpu
            micro_batches, batch_idx_list = prepare_dynamic_batch(
                data, max_token_len=max_token_len, dp_group=torch.distributed.group.WORLD
            )
        else:
            micro_batches = data.split(self.config.log_prob_micro_batch_size_per_gpu)

        log_probs_lst = []
        for micro_batch in micro_batches:
            with torch.no_grad():
                log_probs_lst.append(self._forward_micro_batch(micro_batch, temperature))
        log_probs = torch.cat(log_probs_lst, dim=0)

        if self.use_dynamic_bsz:
            log_probs = restore_dynamic_batch(log_probs, batch_idx_list)
        return log_probs

    def update_policy(self, data: TensorDict, temperature: float) -> dict:
        self.actor_module.train()
        metrics = defaultdict(list)
        mini_batches = data.split(self.config.ppo_mini_batch_size)

        for _ in range(self.config.ppo_epochs):
            for mini_batch in mini_batches:
                if self.use_dynamic_bsz:
                    max_token_len = self.config.ppo_max_token_len_per_gpu
                    micro_batches, _ = prepare_dynamic_batch(
                        mini_batch, max_token_len=max_token_len, dp_group=torch.distributed.group.WORLD
                    )
                else:
                    micro_batches = mini_batch.split(self.config.ppo_micro_batch_size_per_gpu)

                self.actor_optimizer.zero_grad()
                for micro_batch in micro_batches:
                    response_mask = micro_batch["response_mask"]
                    log_prob = self._forward_micro_batch(micro_batch, temperature)
                    pg_loss = compute_policy_loss(
                        old_log_prob=micro_batch["old_log_probs"],
                        log_prob=log_prob,
                        advantages=micro_batch["advantages"],
                        response_mask=response_mask,
                        clip_ratio=self.config.clip_ratio,
                    )
                    # Weight each micro-batch by its share of the mini-batch's sequences.
                    loss = pg_loss * (response_mask.shape[0] / mini_batch.batch_size[0])
                    loss.backward()
                    metrics["actor/pg_loss"].append(pg_loss.detach().item())

                grad_norm = self._optimizer_step()
                metrics["actor/grad_norm"].append(grad_norm.detach().item())

        self.actor_optimizer.zero_grad()
        return metrics
