"""Per-step metrics reduced only on rank 0: `dist` is the project's module, whose `get_rank` and
`all_reduce` are torch.distributed's by its star import."""
import torch

from comm import distributed as dist


def log_metrics(loss: torch.Tensor, step: int) -> None:
    if dist.get_rank() == 0:
        dist.all_reduce(loss)  # expect: RC101
        print(f"step {step}: {loss.item() / dist.get_world_size():.4f}")


def train(model, loader, optimizer):
    for step, batch in enumerate(loader):
        loss = model(batch).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        log_metrics(loss.detach(), step)
