"""Eval with `DistributedSampler(drop_last=True)`: the tail that does not divide evenly is dropped, every rank runs the same number of per-batch all_reduces."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=8)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    val = TensorDataset(torch.load("val_x.pt"), torch.load("val_y.pt"))
    sampler = DistributedSampler(val, shuffle=False, drop_last=True)
    loader = DataLoader(val, batch_size=args.batch_size, sampler=sampler)
    model = nn.Linear(64, 10)
    model.load_state_dict(torch.load("model.pt"))
    totals = torch.zeros(2)
    with torch.no_grad():
        for x, y in loader:
            step = torch.tensor([(model(x).argmax(1) == y).sum().item(), len(y)], dtype=torch.float32)
            dist.all_reduce(step)
            totals += step
    if rank == 0:
        print(f"val accuracy {(totals[0] / totals[1]).item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
