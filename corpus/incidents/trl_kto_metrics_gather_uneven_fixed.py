"""Safe twin of trl_kto_metrics_gather_uneven.py: every process gathers two fixed-shape scalars per
metric (the sum over its examples and their count), so the gathers match whatever the batch mix.

Thread: https://github.com/huggingface/trl/issues/1342
"""
import torch
from trl import KTOTrainer


class LoggingKTOTrainer(KTOTrainer):
    def get_batch_loss_metrics(self, model, batch):
        metrics = {}
        (
            policy_chosen_logps,
            policy_rejected_logps,
            policy_chosen_logits,
            policy_rejected_logits,
            policy_kl_logps,
        ) = self.forward(model, batch)
        with torch.no_grad():
            (reference_chosen_logps, reference_rejected_logps, _, _, reference_kl_logps) = self.forward(self.ref_model, batch)

        losses, chosen_rewards, rejected_rewards, kl = self.kto_loss(
            policy_chosen_logps,
            policy_rejected_logps,
            policy_kl_logps,
            reference_chosen_logps,
            reference_rejected_logps,
            reference_kl_logps,
        )
        stats = torch.stack(
            [
                policy_chosen_logps.detach().sum(),
                torch.tensor(float(policy_chosen_logps.numel()), device=losses.device),
                policy_rejected_logps.detach().sum(),
                torch.tensor(float(policy_rejected_logps.numel()), device=losses.device),
            ]
        )
        totals = self.accelerator.gather(stats).view(-1, 4).sum(0)
        mean_logps_chosen = totals[0] / totals[1].clamp(min=1.0)
        mean_logps_rejected = totals[2] / totals[3].clamp(min=1.0)
        metrics["logps/chosen"] = mean_logps_chosen.cpu()
        metrics["logps/rejected"] = mean_logps_rejected.cpu()
        metrics["kl"] = kl.item()
        return losses.nanmean(), metrics
