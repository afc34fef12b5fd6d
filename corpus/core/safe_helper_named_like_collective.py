"""all_reduce_stats() only sums a local tensor (no dist call), so calling it under `if rank == 0` is harmless despite its name."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def all_reduce_stats(per_step_losses: torch.Tensor) -> torch.Tensor:
    return per_step_losses.sum()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Linear(6, 6)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    history = torch.zeros(args.steps)
    for step in range(args.steps):
        loss = model(torch.randn(4, 6)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        opt.step()
        history[step] = loss.item()
    if rank == 0:
        total = all_reduce_stats(history)
        print(f"rank-0 local loss sum: {total.item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
