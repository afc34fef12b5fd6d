"""A Trainer subclass computes a token-level statistic over every process: it keeps the
non-padding tokens of this process's batch (`per_token[mask.bool()]`) and gathers them. How many
tokens a batch keeps differs per process, and Accelerator.gather (an all_gather_into_tensor)
needs one shape everywhere: the processes wait in it for sizes that never match."""
import torch
from transformers import Trainer


class TokenStatsTrainer(Trainer):
    def token_quantile(self, per_token: torch.Tensor, mask: torch.Tensor, q: float) -> torch.Tensor:
        kept = per_token[mask.bool()].float()
        everyone = self.accelerator.gather(kept)  # expect: RC104
        return torch.quantile(everyone, q)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"])
        per_token = torch.nn.functional.cross_entropy(
            outputs.logits.transpose(1, 2), inputs["labels"], reduction="none"
        )
        cut = self.token_quantile(per_token.detach(), inputs["attention_mask"], 0.9)
        loss = (per_token * (per_token.detach() <= cut)).mean()
        return (loss, outputs) if return_outputs else loss
