"""Rank 0 alone checks the deadline, but the decision is broadcast to everyone, so the `break` on it is uniform."""
import argparse
import time

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-steps", type=int, default=100_000)
    parser.add_argument("--deadline-s", type=float, default=1800.0)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Linear(16, 16)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    t0 = time.time()
    for step in range(args.max_steps):
        stop = torch.zeros(1)
        if rank == 0 and time.time() - t0 > args.deadline_s:
            stop[0] = 1.0
        dist.broadcast(stop, src=0)
        if stop.item() == 1.0:
            break
        loss = model(torch.randn(8, 16)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        for p in model.parameters():
            dist.all_reduce(p.grad)
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
