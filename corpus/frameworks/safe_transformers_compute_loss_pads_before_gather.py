"""The same token statistic, done the way accelerate's docs say: every process pads its kept
tokens to the longest with Accelerator.pad_across_processes (which agrees on the sizes first), so
the gather sees one shape everywhere, and the padding is dropped afterwards."""
import torch
from transformers import Trainer


class TokenStatsTrainer(Trainer):
    def token_quantile(self, per_token: torch.Tensor, mask: torch.Tensor, q: float) -> torch.Tensor:
        kept = per_token[mask.bool()].float()
        padded = self.accelerator.pad_across_processes(kept, dim=0, pad_index=float("nan"))
        everyone = self.accelerator.gather(padded)
        return torch.nanquantile(everyone, q)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"])
        per_token = torch.nn.functional.cross_entropy(
            outputs.logits.transpose(1, 2), inputs["labels"], reduction="none"
        )
        cut = self.token_quantile(per_token.detach(), inputs["attention_mask"], 0.9)
        loss = (per_token * (per_token.detach() <= cut)).mean()
        return (loss, outputs) if return_outputs else loss
