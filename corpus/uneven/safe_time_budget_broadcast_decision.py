"""Fix for a wall-clock budget: only rank 0's clock decides, the decision is broadcast every step, and all ranks `break` together."""
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
    out_of_time = torch.zeros(1)
    while True:
        out_of_time.fill_(float(time.time() - start >= args.budget_s))
        dist.broadcast(out_of_time, src=0)
        if out_of_time.item() > 0:
            break
        x = torch.randn(32, 256)
        loss = (model(x) - x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
