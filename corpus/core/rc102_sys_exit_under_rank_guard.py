"""Rank 0 finds a finished run and calls sys.exit(); the other ranks block in the barrier that follows."""
import argparse
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="runs/exp1")
    parser.add_argument("--steps", type=int, default=500)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()

    if rank == 0 and os.path.exists(os.path.join(args.out, "final.pt")):
        print(f"{args.out} already has a final checkpoint, nothing to do")
        sys.exit(0)  # expect: RC102
    dist.barrier()

    model = nn.Linear(4, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(args.steps):
        loss = model(torch.randn(8, 4)).abs().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    if rank == 0:
        os.makedirs(args.out, exist_ok=True)
        torch.save(model.state_dict(), os.path.join(args.out, "final.pt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
