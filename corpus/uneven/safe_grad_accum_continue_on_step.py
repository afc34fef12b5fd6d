"""Gradient accumulation `continue`s on the step counter, not on data: every rank skips the same optimizer steps, and `no_sync()` keeps DDP's all_reduce to the boundary steps on all ranks."""
import argparse
import contextlib

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--accum", type=int, default=4)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    ds = TensorDataset(torch.load("x.pt"), torch.load("y.pt"))
    loader = DataLoader(ds, batch_size=16, sampler=DistributedSampler(ds), drop_last=True)
    model = DDP(nn.Linear(40, 1))
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    for step, (x, y) in enumerate(loader):
        boundary = (step + 1) % args.accum == 0
        ctx = contextlib.nullcontext() if boundary else model.no_sync()
        with ctx:
            loss = nn.functional.mse_loss(model(x), y) / args.accum
            loss.backward()
        if not boundary:
            continue
        opt.step()
        opt.zero_grad()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
