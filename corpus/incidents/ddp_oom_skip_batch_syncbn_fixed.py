"""Safe twin of ddp_oom_skip_batch_syncbn.py: the out-of-memory error is no longer swallowed; it ends
the worker, and the elastic launcher (torchrun --max-restarts) restarts all of them from the last
checkpoint, as the maintainer advised.

Thread: https://github.com/pytorch/pytorch/issues/44353
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
        outputs = model(inputs.to(device, non_blocking=True))
        loss = criterion(outputs, targets.to(device, non_blocking=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


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
