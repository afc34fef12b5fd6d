"""Segmentation training with DDP and SyncBatchNorm: a batch that runs out of GPU memory is caught
and skipped, and the epoch continues with the next batch.

Thread: https://github.com/pytorch/pytorch/issues/44353 ("DDP training with syncBatchNorm, how to catch and handle the exception in training processes?")
Project: pytorch/pytorch
What hung: "when one process catch the exception, the others get blocked." The forward (SyncBN's
all-reduces of batch statistics) and the backward (DDP's gradient all-reduce) are collective; the
process that ran out of memory left them half-done and moved to the next batch while the others
waited. Maintainer (mrshenli): "If you skip comm or redo comm after OOM, it will lead to collective
communication desync, which leads to the hang. torchelastic is built for this problem. It will
destroy all DDP and ProcessGroup instances, and reconstruct them".
Fix: do not swallow the OOM in a distributed run -- let it propagate so the elastic launcher tears
down and restarts every worker.
Expected rankcheck finding: RC105 on the `except RuntimeError` that swallows the per-rank OOM
around the collective forward/backward.
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def train_epoch(model, train_loader, criterion, optimizer, device):
    model.train()
    for i, (inputs, targets) in enumerate(train_loader):
        try:
            outputs = model(inputs.to(device, non_blocking=True))
            loss = criterion(outputs, targets.to(device, non_blocking=True))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        except RuntimeError as e:  # expect: RC105
            if "out of memory" in str(e):
                print("| WARNING: ran out of memory, skipping this batch.")
                if hasattr(torch.cuda, "empty_cache"):
                    torch.cuda.empty_cache()
                optimizer.zero_grad()
            else:
                raise e


def main(build_model, train_set):
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--batch-size", type=int, default=8)
    args = parser.parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    model = nn.SyncBatchNorm.convert_sync_batchnorm(build_model()).to(device)
    model = DDP(model, device_ids=[local_rank])
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler, num_workers=4, pin_memory=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    criterion = nn.CrossEntropyLoss(ignore_index=255)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        train_epoch(model, loader, criterion, optimizer, device)
