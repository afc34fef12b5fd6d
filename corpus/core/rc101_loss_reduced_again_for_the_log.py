"""The main process reduces the loss once more to print it, through the helper every rank calls
right after: every tenth step, rank 0 issues one all_reduce more than the others."""
import torch
import torch.distributed as dist
import torch.nn as nn


def reduce_mean(value: torch.Tensor) -> torch.Tensor:
    dist.all_reduce(value)
    return value / dist.get_world_size()


def averaged_loss(loss: torch.Tensor, step: int) -> torch.Tensor:
    if dist.get_rank() == 0 and step % 10 == 0:
        print(step, reduce_mean(loss.detach().clone()).item())  # expect: RC101
    return reduce_mean(loss.detach())


def train(steps: int = 100) -> None:
    dist.init_process_group("gloo")
    model = nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(steps):
        loss = model(torch.randn(16, 4)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        opt.step()
        averaged_loss(loss, step)
    dist.destroy_process_group()


if __name__ == "__main__":
    train()
