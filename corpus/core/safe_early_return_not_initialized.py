"""average_gradients() returns early `if not dist.is_initialized()`: that is true on all ranks or none, so no rank is left waiting."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def average_gradients(model: nn.Module) -> None:
    if not dist.is_initialized():
        return
    world_size = dist.get_world_size()
    for p in model.parameters():
        dist.all_reduce(p.grad)
        p.grad /= world_size


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--distributed", action="store_true")
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()

    if args.distributed:
        dist.init_process_group("gloo")
    model = nn.Linear(8, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(args.steps):
        loss = model(torch.randn(16, 8)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        average_gradients(model)
        opt.step()
    if args.distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
