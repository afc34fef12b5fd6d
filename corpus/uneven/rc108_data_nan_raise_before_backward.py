"""A rank whose local loss is not finite raises FloatingPointError before backward; the other ranks enter DDP's gradient all_reduce and wait for it until the collective timeout."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def train_epoch(model, opt, loader, epoch):
    for step, (x, y) in enumerate(loader):
        loss = nn.functional.binary_cross_entropy_with_logits(model(x), y)
        if not torch.isfinite(loss):
            raise FloatingPointError(f"non-finite loss at epoch {epoch} step {step}")  # expect: RC108
        opt.zero_grad()
        loss.backward()
        opt.step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    ds = TensorDataset(torch.load("x.pt"), torch.load("y.pt"))
    sampler = DistributedSampler(ds)
    loader = DataLoader(ds, batch_size=128, sampler=sampler)
    model = DDP(nn.Linear(30, 1))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        train_epoch(model, opt, loader, epoch)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
