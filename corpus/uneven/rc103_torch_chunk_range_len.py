"""The dataset tensor is cut with `torch.chunk(data, world_size)[rank]`; the last chunk is shorter, so `range(0, len(shard), bs)` gives that rank fewer steps and fewer manual gradient all_reduces."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def average_gradients(model: nn.Module) -> None:
    world_size = dist.get_world_size()
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad)
            p.grad /= world_size


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    data = torch.load("tokens.pt")
    shard = torch.chunk(data, world_size)[rank]

    model = nn.Sequential(nn.Embedding(5000, 64), nn.Flatten(), nn.Linear(64 * 16, 5000))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for start in range(0, len(shard), args.batch_size):  # expect: RC103
        batch = shard[start:start + args.batch_size]
        loss = nn.functional.cross_entropy(model(batch[:, :16]), batch[:, 16])
        opt.zero_grad()
        loss.backward()
        average_gradients(model)
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
