"""A `match` on the rank gives rank 0 the role of aggregator with an all_reduce; the `case _` ranks never issue it."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=60)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Linear(24, 24)
    opt = torch.optim.SGD(model.parameters(), lr=0.02)
    running = torch.zeros(1)
    for _ in range(args.steps):
        loss = model(torch.randn(6, 24)).abs().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        running += loss.detach()

    match rank:
        case 0:
            dist.all_reduce(running)  # expect: RC101
            print(f"mean loss over all ranks: {running.item() / (args.steps * dist.get_world_size()):.4f}")
        case _:
            print(f"rank {rank} done")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
