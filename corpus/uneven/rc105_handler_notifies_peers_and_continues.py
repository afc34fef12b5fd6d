"""The handler tries to tell the other ranks about the failure with an all_reduce and then continues: the peers are not in any handler, so that all_reduce pairs with the wrong collective or hangs."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    dataset = torch.load("pairs.pt")
    loader = DataLoader(dataset, batch_size=16, sampler=DistributedSampler(dataset))
    model = DDP(nn.Bilinear(32, 32, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    failures = torch.zeros(1)
    for epoch in range(args.epochs):
        for a, b, target in loader:
            try:
                loss = nn.functional.mse_loss(model(a, b).squeeze(-1), target)
                opt.zero_grad()
                loss.backward()
                opt.step()
            except RuntimeError as err:  # expect: RC105
                print(f"rank {dist.get_rank()}: {err}")
                failures += 1
                dist.all_reduce(failures)  # expect: RC105
                continue
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
