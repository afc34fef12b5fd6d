"""Fix for NaN-skip under DDP: each rank votes with a flag, the flag is all-reduced with MAX, and the `continue` on it is taken by every rank at the same step."""
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
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    ds = TensorDataset(torch.load("x.pt"), torch.load("y.pt"))
    sampler = DistributedSampler(ds, shuffle=True)
    loader = DataLoader(ds, batch_size=64, sampler=sampler)
    model = DDP(nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            bad = torch.tensor([0.0 if torch.isfinite(loss) else 1.0])
            dist.all_reduce(bad, op=dist.ReduceOp.MAX)
            if bad.item() > 0:
                if rank == 0:
                    print(f"non-finite loss on some rank in epoch {epoch}, all ranks skip this batch")
                continue
            opt.zero_grad()
            loss.backward()
            opt.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
