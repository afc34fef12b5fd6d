"""Safe twin of trl_grpo_entropy_mask_gather_lengths.py: as in trl PR #3964, the token counts are
gathered first, each process pads its entropies to the largest count, the padded tensors are
gathered, and the padding is dropped before the quantile.

Thread: https://github.com/huggingface/trl/issues/3933
"""
import torch
from trl import GRPOTrainer


class EntropyMaskedGRPOTrainer(GRPOTrainer):
    def get_high_entropy_mask(self, entropies: torch.Tensor, mask: torch.Tensor, threshold: float) -> torch.Tensor:
        non_pad_entropies = entropies[mask.bool()].float()
        local_count = torch.tensor([non_pad_entropies.numel()], device=entropies.device)
        all_counts = self.accelerator.gather(local_count)
        max_count = int(all_counts.max().item())
        padded = torch.full((max_count,), float("nan"), device=entropies.device)
        padded[: non_pad_entropies.numel()] = non_pad_entropies
        all_padded = self.accelerator.gather(padded)
        all_non_pad_entropies = all_padded[~torch.isnan(all_padded)]
        if all_non_pad_entropies.numel() == 0:
            return torch.zeros_like(entropies, dtype=torch.bool)
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
