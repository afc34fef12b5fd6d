"""Safe twin of torchtitan_validation_consumes_whole_dataset.py: as in torchtitan#1634, the number
of validation steps is always finite and the dataloader re-iterates the dataset (infinite), so
every rank runs exactly `steps` validation forwards.

Thread: https://github.com/pytorch/torchtitan/issues/1618
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
        steps = self.job_config.validation.steps if self.job_config.validation.steps > 0 else 200
        batches = iter(self.validation_dataloader)
        for _ in range(steps):
            try:
                input_dict, labels = next(batches)
            except StopIteration:
                batches = iter(self.validation_dataloader)
                input_dict, labels = next(batches)
            inputs = input_dict["input"].cuda()
            labels = labels.cuda()
            pred = model(inputs)
            accumulated_losses.append(self.loss_fn(pred, labels).detach())
            num_steps += 1
        loss = torch.sum(torch.stack(accumulated_losses)) / num_steps
        global_avg_loss = dist_mean(loss, self.dp_mesh)
        self.metrics_processor.log_validation(loss=global_avg_loss, step=step)
        model.train()
