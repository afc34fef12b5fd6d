"""The same metrics, reduced on every rank and printed by rank 0 alone."""
import torch

from comm import distributed as dist


def log_metrics(loss: torch.Tensor, step: int) -> None:
    dist.all_reduce(loss)
    if dist.get_rank() == 0:
        print(f"step {step}: {loss.item() / dist.get_world_size():.4f}")


def train(model, loader, optimizer):
    for step, batch in enumerate(loader):
        loss = model(batch).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        log_metrics(loss.detach(), step)
