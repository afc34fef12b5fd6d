"""`rank == 0 and dist.barrier()` short-circuits: only rank 0 evaluates the barrier, so it waits for ranks that never come."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="outputs")
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Linear(5, 5)
    opt = torch.optim.Adam(model.parameters())
    for epoch in range(args.epochs):
        for _ in range(40):
            loss = model(torch.randn(10, 5)).var()
            opt.zero_grad()
            loss.backward()
            opt.step()
        if rank == 0:
            os.makedirs(args.out, exist_ok=True)
            torch.save(model.state_dict(), os.path.join(args.out, f"e{epoch}.pt"))
        rank == 0 and dist.barrier()  # expect: RC101
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
