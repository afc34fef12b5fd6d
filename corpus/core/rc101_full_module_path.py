"""Written with full `torch.distributed.` paths and no alias: the all_reduce under `get_rank() == 0` still runs on rank 0 only."""
import argparse

import torch
import torch.distributed
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=40)
    args = parser.parse_args()

    torch.distributed.init_process_group(backend="gloo")
    model = nn.Linear(9, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    total = torch.zeros(1)
    for _ in range(args.steps):
        loss = model(torch.randn(5, 9)).pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.detach()
    if torch.distributed.get_rank() == 0:
        torch.distributed.all_reduce(total)  # expect: RC101
        print(f"total loss across ranks: {total.item():.3f}")
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
