"""On a local loss spike a rank gathers every rank's batch ids with all_gather_object for debugging; ranks without a spike never call it and the spiking rank hangs."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--spike", type=float, default=50.0)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    n = 4096
    ds = TensorDataset(torch.arange(n), torch.load("x.pt"), torch.load("y.pt"))
    loader = DataLoader(ds, batch_size=32, sampler=DistributedSampler(ds))
    model = DDP(nn.Linear(24, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    best = float("inf")
    for step, (ids, x, y) in enumerate(loader):
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        best = min(best, loss.item())
        if loss.item() > best * args.spike:
            everyone = [None] * dist.get_world_size()
            dist.all_gather_object(everyone, {"step": step, "ids": ids.tolist()})  # expect: RC101
            torch.save(everyone, f"spike_step{step}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
