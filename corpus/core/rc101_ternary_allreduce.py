"""An async all_reduce is launched in a ternary only when rank == 0; the other ranks take the `else None` arm and never join."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Linear(32, 32)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)

    for step in range(args.steps):
        loss = model(torch.randn(8, 32)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        stat = loss.detach().reshape(1)
        handle = dist.all_reduce(stat, async_op=True) if rank == 0 else None  # expect: RC101
        if handle is not None:
            handle.wait()
            print(f"step {step} summed loss {stat.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
