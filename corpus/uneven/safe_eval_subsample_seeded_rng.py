"""Random eval subsampling with a `random.Random(seed)` instance seeded identically on every rank: the skip pattern is the same everywhere, so the all_reduces stay paired."""
import argparse
import random

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sample-rate", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=1234)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rng = random.Random(args.seed)
    ds = TensorDataset(torch.load("val_x.pt"), torch.load("val_y.pt"))
    loader = DataLoader(ds, batch_size=64, sampler=DistributedSampler(ds, shuffle=False))
    model = nn.Linear(32, 5)
    model.load_state_dict(torch.load("model.pt"))
    loss_sum = torch.zeros(2)
    with torch.no_grad():
        for x, y in loader:
            if rng.random() > args.sample_rate:
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
