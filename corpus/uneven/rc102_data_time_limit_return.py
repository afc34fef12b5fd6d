"""Before the cluster's time limit each rank checks its own clock and returns from train() to save and exit; the ranks cross the deadline at different steps, and the late ones wait in DDP's backward."""
import argparse
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def train(model, opt, steps: int, deadline: float) -> int:
    for step in range(steps):
        if time.time() > deadline:
            return step  # expect: RC102
        x = torch.randn(64, 100)
        loss = nn.functional.smooth_l1_loss(model(x), x[:, :10])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return steps


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10**6)
    parser.add_argument("--time-limit-s", type=float, default=4 * 3600)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    model = DDP(nn.Linear(100, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    done = train(model, opt, args.steps, time.time() + args.time_limit_s - 600)
    if dist.get_rank() == 0:
        torch.save({"model": model.module.state_dict(), "step": done}, "resume.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
