"""Plain-PyTorch DDP training; the test set is evaluated on rank 0 only, with the torchmetrics
collection built in evaluation.py.

Thread: https://github.com/Lightning-AI/torchmetrics/issues/938 ("Using Module Metrics with PyTorch DDP (without PyTorch Lightning)")
Project: Lightning-AI/torchmetrics
What hung: "when I call metrics.compute() at the end of the testing, torchmetrics attempts to
perform a distributed synchronization process across all GPUs (by default,
torch.distributed.all_gather()). Because the test function is only called if the process is of
rank 0 ... the code just hangs at the compute step until the timeout is hit."
Fix: either evaluate on every rank (each on its shard) so that `compute()` is called by all, or,
to keep single-process evaluation, build the metrics with `sync_on_compute=False` (the option
torchmetrics provides for this; used in the safe twin).
Expected rankcheck finding: RC101 on the rank-0-only `test(...)` call, which reaches
`MetricCollection.compute()`.
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
        results = test(model.module, test_loader, metrics, device)  # expect: RC101
        print(results)
    dist.destroy_process_group()
