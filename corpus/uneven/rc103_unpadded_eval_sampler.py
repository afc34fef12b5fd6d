"""An evaluation sampler subclasses DistributedSampler but drops its padding so no sample is counted twice; the ranks then run different numbers of eval steps, each with an all_reduce."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


class UnpaddedDistributedSampler(DistributedSampler):
    def __iter__(self):
        indices = list(range(len(self.dataset)))
        return iter(indices[self.rank::self.num_replicas])

    def __len__(self):
        return len(range(self.rank, len(self.dataset), self.num_replicas))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=8)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    val = TensorDataset(torch.load("val_x.pt"), torch.load("val_y.pt"))
    loader = DataLoader(val, batch_size=args.batch_size, sampler=UnpaddedDistributedSampler(val, shuffle=False))
    model = nn.Linear(64, 10)
    model.load_state_dict(torch.load("model.pt"))
    totals = torch.zeros(2)
    with torch.no_grad():
        for x, y in loader:  # expect: RC103
            hits = (model(x).argmax(1) == y).sum().float()
            step = torch.stack([hits, torch.tensor(float(len(y)))])
            dist.all_reduce(step)
            totals += step
    if rank == 0:
        print(f"val accuracy {(totals[0] / totals[1]).item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
