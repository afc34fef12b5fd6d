"""KTO training with DeepSpeed: the batch metrics gather the chosen and rejected log-probabilities of
every process, but each process's tensors hold only the examples of that kind in its micro-batch
(possibly none, replaced by a NaN placeholder).

Thread: https://github.com/huggingface/trl/issues/1342 ("KTO hangs when using DeepSpeed")
Project: huggingface/trl
What hung: "when there are only positive/negative examples in a microbatch, the
`policy_chosen_logps` or `policy_rejected_logps` is changed from an empty tensor to [torch.nan]
just before being gathered, since empty tensors cause hanging ... However, if the tensors are empty
on one machine when gather() is called on another, we're back to square one --> hanging"
(kawine, the KTO author). The gathered tensors have per-process lengths.
Fix: the thread pins the hang on these variable-length gathers; the remedy applied in the twin
gathers fixed-shape statistics (per-process sums and counts) and divides, so the shapes agree. The
stored excerpt does not show which patch trl merged for it.
Expected rankcheck finding: RC104 on the `accelerator.gather(...)` calls whose tensors have a
per-process length.
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
        if policy_chosen_logps.numel() == 0:
            policy_chosen_logps = torch.tensor([float("nan")], device=losses.device)
        if policy_rejected_logps.numel() == 0:
            policy_rejected_logps = torch.tensor([float("nan")], device=losses.device)

        mean_logps_chosen = self.accelerator.gather(policy_chosen_logps.detach()).nanmean().nan_to_num(0)  # expect: RC104
        mean_logps_rejected = self.accelerator.gather(policy_rejected_logps.detach()).nanmean().nan_to_num(0)  # expect: RC104
        metrics["logps/chosen"] = mean_logps_chosen.cpu()
        metrics["logps/rejected"] = mean_logps_rejected.cpu()
        metrics["kl"] = kl.item()
        return losses.nanmean(), metrics
