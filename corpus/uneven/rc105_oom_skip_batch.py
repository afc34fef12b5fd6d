"""The classic OOM-skip: on `torch.cuda.OutOfMemoryError` the rank frees the cache and moves to the next batch, but the other ranks are inside that step's DDP gradient all_reduce and never see it."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local-rank", type=int, default=0)
    args = parser.parse_args()

    dist.init_process_group("nccl")
    torch.cuda.set_device(args.local_rank)
    dataset = torch.load("images.pt")  # variable-resolution image tensors with labels
    loader = DataLoader(dataset, batch_size=1, sampler=DistributedSampler(dataset))
    net = nn.Sequential(nn.Conv2d(3, 64, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 100))
    model = DDP(net.cuda(), device_ids=[args.local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    skipped = 0
    for image, label in loader:
        try:
            loss = nn.functional.cross_entropy(model(image.cuda()), label.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()
        except torch.cuda.OutOfMemoryError:  # expect: RC105
            skipped += 1
            torch.cuda.empty_cache()
    print(f"rank {dist.get_rank()} skipped {skipped} batches")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
