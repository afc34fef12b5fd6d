"""GRPO with entropy-based token masking (`top_entropy_quantile < 1`): the entropy threshold is the
quantile of all non-padding token entropies, gathered across processes with `accelerator.gather`.

Thread: https://github.com/huggingface/trl/issues/3933 ("`GRPOTrainer` with `top_entropy_quntile < 1` causes hang with multi gpu training")
Project: huggingface/trl
What hung: "this is because of the gather in the function `get_high_entropy_mask` ... probably
because `non_pad_entropies` have different lengths on each" process. The gathered tensor is the
masked selection of one process's tokens, so its length is that process's count of non-padding
tokens; an all-gather with different sizes never completes.
Fix (trl PR #3964): "1. Gathering the number of non padded entropy tokens. 2. Find the max number of
non padded entropy tokens across all gpus. 3. Pad the non padded entropies to the max length
4. Gather all the entropies post padding. 5. Compute the threshold".
Expected rankcheck finding: RC104 on the `self.accelerator.gather(non_pad_entropies)` whose shape
is a per-rank count.
"""
import torch
from trl import GRPOTrainer


class EntropyMaskedGRPOTrainer(GRPOTrainer):
    def get_high_entropy_mask(self, entropies: torch.Tensor, mask: torch.Tensor, threshold: float) -> torch.Tensor:
        non_pad_entropies = entropies[mask.bool()].float()
        all_non_pad_entropies = self.accelerator.gather(non_pad_entropies)  # expect: RC104
        entropy_threshold = torch.quantile(all_non_pad_entropies, threshold)
        masked_entropies = entropies * mask.float()
        return (masked_entropies >= entropy_threshold) & mask.bool()

    def _compute_loss(self, model, inputs):
        per_token_logps, entropies = self._get_per_token_logps_and_entropies(
            model, inputs["input_ids"], inputs["attention_mask"], inputs["logits_to_keep"], compute_entropy=True
        )
        entropy_mask = self.get_high_entropy_mask(entropies, inputs["completion_mask"], 1 - self.top_entropy_quantile)
        advantages = inputs["advantages"].unsqueeze(1)
        per_token_loss = -torch.exp(per_token_logps - per_token_logps.detach()) * advantages
        per_token_loss = per_token_loss * entropy_mask
        return (per_token_loss * inputs["completion_mask"]).sum() / inputs["completion_mask"].sum().clamp(min=1.0)
