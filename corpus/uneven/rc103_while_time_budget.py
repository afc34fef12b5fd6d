"""Training runs `while time.time() - start < budget`; each rank reads its own clock, so one rank leaves the loop a step before the others, which then wait in DDP's gradient all_reduce."""
import argparse
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--budget-s", type=float, default=3600.0)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    model = DDP(nn.Linear(256, 256))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    start = time.time()
    steps = 0
    while time.time() - start < args.budget_s:  # expect: RC103
        x = torch.randn(32, 256)
        loss = (model(x) - x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        steps += 1
    if dist.get_rank() == 0:
        torch.save(model.module.state_dict(), f"budgeted_{steps}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
