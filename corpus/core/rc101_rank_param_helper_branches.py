"""main() passes `rank = dist.get_rank()` into log_step(), which branches on its parameter and all-reduces only on rank 0."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def log_step(rank: int, step: int, loss: torch.Tensor) -> None:
    if rank == 0:
        loss = loss.detach().clone()
        dist.all_reduce(loss)  # expect: RC101
        print(f"step {step}: global loss {loss.item() / dist.get_world_size():.4f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(args.steps):
        x = torch.randn(16, 3)
        loss = (model(x).squeeze(1) - x.sum(1)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        log_step(rank, step, loss)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
