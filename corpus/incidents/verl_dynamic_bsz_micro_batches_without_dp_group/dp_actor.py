"""PPO/GRPO actor of a verl-style trainer on an FSDP-sharded policy: log-probabilities and policy
updates are computed micro-batch by micro-batch; with `use_dynamic_bsz` the micro-batches are cut
by token budget (`ppo_max_token_len_per_gpu`) rather than by a fixed number of sequences.

Thread: https://github.com/verl-project/verl/pull/5591 ("[fsdp] fix: pass dp_group to prepare_dynamic_batch to fix CUDA deadlock"); same report in verl#6176 and verl#6178
Project: verl-project/verl
What hung: after a `dp_group is not None` guard was added in `seqlen_balancing.py`, "the FSDP
actor's calls to `prepare_dynamic_batch` in `dp_actor.py` (which do not pass `dp_group`) silently
skip the `num_micro_batches` all_reduce across data-parallel ranks." Each rank gets its own
sequences, "each rank independently computes `num_micro_batches = ceildiv(total_seqlen,
max_token_len)`", and "when one rank finishes its micro-batch loop while another is still in a
forward pass, FSDP collectives (AllGather/ReduceScatter) deadlock" (e.g. 5 long sequences -> 5
micro-batches on rank 0, 5 short ones -> 1 micro-batch on rank 1).
Fix (the PR, merged): pass `torch.distributed.group.WORLD` as `dp_group` in both
`compute_log_prob` and `update_policy`, which turns the MAX all-reduce of the micro-batch count
back on.
Expected rankcheck finding: RC103 on the two `for micro_batch in micro_batches:` loops, whose trip
count is this rank's token total divided by the budget.
(Trimmed: Ulysses sequence parallelism, remove-padding, entropy/KL terms and the Ray dispatch
decorators are left out; the per-rank batch arrives as the `data` argument, as verl's
DP_COMPUTE_PROTO dispatch hands each worker its own chunk.)
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
            micro_batches, batch_idx_list = prepare_dynamic_batch(data, max_token_len=max_token_len)
        else:
            micro_batches = data.split(self.config.log_prob_micro_batch_size_per_gpu)

        log_probs_lst = []
        for micro_batch in micro_batches:  # expect: RC103
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
                    micro_batches, _ = prepare_dynamic_batch(mini_batch, max_token_len=max_token_len)
                else:
                    micro_batches = mini_batch.split(self.config.ppo_micro_batch_size_per_gpu)

                self.actor_optimizer.zero_grad()
                for micro_batch in micro_batches:  # expect: RC103
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
