"""Safe twin of torchmetrics_test_on_rank0_compute: the test still runs on rank 0 only, but its
metrics are built with `sync_on_compute=False` (evaluation.py), so `compute()` does not wait for
the other ranks.

Thread: https://github.com/Lightning-AI/torchmetrics/issues/938
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from evaluation import build_metrics, test


def main(model, train_set, test_set, num_classes: int):
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch_size", type=int, default=16)
    args = parser.parse_args()

    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    model = DDP(model.to(device), device_ids=[local_rank], broadcast_buffers=False)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler)
    test_loader = DataLoader(test_set, batch_size=args.batch_size)
    metrics = build_metrics(num_classes, device)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for images, masks in train_loader:
            loss = F.cross_entropy(model(images.to(device)), masks.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

    if rank == 0:
        results = test(model.module, test_loader, metrics, device)
        print(results)
    dist.destroy_process_group()
