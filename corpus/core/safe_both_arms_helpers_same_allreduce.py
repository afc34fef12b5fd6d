"""Rank 0 calls reduce_and_log() and the others reduce_quietly(); both helpers issue exactly one all_reduce, so sequences match."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def reduce_and_log(t: torch.Tensor, step: int) -> None:
    dist.all_reduce(t)
    print(f"step {step}: global loss {t.item() / dist.get_world_size():.4f}")


def reduce_quietly(t: torch.Tensor) -> None:
    dist.all_reduce(t)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Linear(12, 12)
    opt = torch.optim.Adam(model.parameters())
    for step in range(args.steps):
        loss = model(torch.randn(6, 12)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        stat = loss.detach().reshape(1)
        if rank == 0:
            reduce_and_log(stat, step)
        else:
            reduce_quietly(stat)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
