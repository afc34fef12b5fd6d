"""In profiling mode every rank stops after the profiled steps; rank 0 reports the timing."""
import argparse
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--profile-steps", type=int, default=2)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Sequential(nn.Linear(10, 10), nn.ReLU(), nn.Linear(10, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    started = time.perf_counter()

    for step in range(args.steps):
        loss = model(torch.randn(8, 10)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        if step == args.profile_steps:
            if rank == 0:
                print(f"{args.profile_steps} steps in {time.perf_counter() - started:.3f}s")
            dist.destroy_process_group()
            sys.exit(0)
        for p in model.parameters():
            dist.all_reduce(p.grad)
        opt.step()

    dist.destroy_process_group()


if __name__ == "__main__":
    main()
