"""Fix for random eval subsampling: batches are kept by index (`batch_idx % stride`), the same on every rank, so the per-batch all_reduces stay paired."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--stride", type=int, default=10)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    ds = TensorDataset(torch.load("val_x.pt"), torch.load("val_y.pt"))
    loader = DataLoader(ds, batch_size=64, sampler=DistributedSampler(ds, shuffle=False))
    model = nn.Linear(32, 5)
    model.load_state_dict(torch.load("model.pt"))
    loss_sum = torch.zeros(2)
    with torch.no_grad():
        for batch_idx, (x, y) in enumerate(loader):
            if batch_idx % args.stride != 0:
                continue
            batch_loss = nn.functional.cross_entropy(model(x), y, reduction="sum")
            stats = torch.stack([batch_loss, torch.tensor(float(len(y)))])
            dist.all_reduce(stats)
            loss_sum += stats
    if dist.get_rank() == 0:
        print(f"sampled val loss {(loss_sum[0] / loss_sum[1]).item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
