"""torchtitan-style validator: with `validation.steps = -1` the validation loop consumes the whole
(finite, per-rank sharded) validation dataset.

Thread: https://github.com/pytorch/torchtitan/issues/1618 ("Validation loop hangs")
Project: pytorch/torchtitan
What hung: the C4 validation split is sharded per data-parallel rank and packed into fixed-length
sequences, so the ranks run out of batches at different steps (the log shows rank 1 at batch 89
while rank 0 is at batch 87). Each validation step is an FSDP forward plus a loss reduction, so
the rank that finished first left the loop while the others waited in the next step.
Fix (torchtitan#1634, "Solving the validation hanging issue"): warn that `steps=-1` can hang, default
`steps` to a finite number, and make the validation dataloader loop (infinite) so every rank can
always produce `steps` batches.
Expected rankcheck finding: RC103 on the loop over the validation dataloader, whose length differs
per rank when `steps == -1`.
"""
import torch
import torch.distributed as dist
from torch.distributed.tensor import DTensor


def dist_mean(x: torch.Tensor, mesh) -> float:
    if isinstance(x, DTensor):
        x = x.full_tensor()
    t = x.detach().clone()
    dist.all_reduce(t, op=dist.ReduceOp.AVG, group=mesh.get_group() if mesh is not None else None)
    return t.item()


class Validator:
    def __init__(self, job_config, dp_mesh, validation_dataloader, loss_fn, metrics_processor):
        self.job_config = job_config
        self.dp_mesh = dp_mesh
        self.validation_dataloader = validation_dataloader
        self.loss_fn = loss_fn
        self.metrics_processor = metrics_processor

    @torch.no_grad()
    def validate(self, model_parts, step: int) -> None:
        model = model_parts[0]
        model.eval()
        accumulated_losses = []
        num_steps = 0
        for input_dict, labels in self.validation_dataloader:  # expect: RC103
            if self.job_config.validation.steps != -1 and num_steps >= self.job_config.validation.steps:
                break
            inputs = input_dict["input"].cuda()
            labels = labels.cuda()
            pred = model(inputs)
            accumulated_losses.append(self.loss_fn(pred, labels).detach())
            num_steps += 1
        loss = torch.sum(torch.stack(accumulated_losses)) / num_steps
        global_avg_loss = dist_mean(loss, self.dp_mesh)
        self.metrics_processor.log_validation(loss=global_avg_loss, step=step)
        model.train()
