"""NaN-skip in a DDP loop: the rank whose local loss is NaN `continue`s past `loss.backward()`, so it never joins that step's gradient all_reduce and the other ranks hang in it."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--lr", type=float, default=1e-2)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    ds = TensorDataset(torch.load("x.pt"), torch.load("y.pt"))
    sampler = DistributedSampler(ds, shuffle=True)
    loader = DataLoader(ds, batch_size=64, sampler=sampler)
    model = DDP(nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            if torch.isnan(loss):
                print(f"rank {rank}: NaN loss in epoch {epoch}, skipping batch")
                continue  # expect: RC103
            opt.zero_grad()
            loss.backward()
            opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
