"""Step-time reporting picks the reduce op by role: rank 0 asks for MAX, the others for SUM; the ops of one all_reduce must agree on every rank."""
import argparse
import time

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    model = nn.Linear(512, 512)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    op = dist.ReduceOp.MAX if rank == 0 else dist.ReduceOp.SUM
    for step in range(args.steps):
        t0 = time.perf_counter()
        loss = model(torch.randn(64, 512)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        elapsed = torch.tensor([time.perf_counter() - t0])
        dist.all_reduce(elapsed, op=op)  # expect: RC104
        if rank == 0 and step % 50 == 0:
            print(f"step {step}: slowest rank took {elapsed.item():.3f}s")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
