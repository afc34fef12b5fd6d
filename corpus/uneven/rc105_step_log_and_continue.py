"""A try/except around the training step logs and continues: a rank whose step raises (bad sample, OOM) skips the DDP backward all_reduce that the other ranks are already waiting in."""
import argparse
import logging

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

log = logging.getLogger("train")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    ds = TensorDataset(torch.load("x.pt"), torch.load("y.pt"))
    loader = DataLoader(ds, batch_size=32, sampler=DistributedSampler(ds))
    model = DDP(nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 10)))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        for step, (x, y) in enumerate(loader):
            try:
                loss = nn.functional.cross_entropy(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
            except Exception:  # expect: RC105
                log.exception("step %d of epoch %d failed, skipping", step, epoch)
                continue
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
