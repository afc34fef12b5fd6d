"""Safe twin of ddp_validation_on_gpu0_through_ddp.py: rank 0 validates `model.module`, the plain
module inside the DDP wrapper, so the validation forward issues no collective.

Thread: https://github.com/pytorch/pytorch/issues/54059
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


def validate(model, val_loader, gpu):
    model.eval()
    correct = total = 0
    for images, labels in val_loader:
        images, labels = images.cuda(gpu), labels.cuda(gpu)
        outputs = model(images)
        correct += (outputs.argmax(1) == labels).sum().item()
        total += labels.numel()
    model.train()
    return correct / total


def train(gpu, args, train_set, val_set, build_model):
    dist.init_process_group("nccl", init_method="env://", world_size=args.world_size, rank=gpu)
    torch.cuda.set_device(gpu)
    model = DDP(build_model().cuda(gpu), device_ids=[gpu])
    criterion = nn.CrossEntropyLoss().cuda(gpu)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    sampler = DistributedSampler(train_set, num_replicas=args.world_size, rank=gpu)
    train_loader = DataLoader(train_set, batch_size=args.batch_size, sampler=sampler, num_workers=4)
    val_loader = DataLoader(val_set, batch_size=args.batch_size)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        for images, labels in train_loader:
            loss = criterion(model(images.cuda(gpu)), labels.cuda(gpu))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if gpu == 0:
            acc = validate(model.module, val_loader, gpu)
            print(f"epoch {epoch}: val acc {acc:.3f}")
        dist.barrier()


def main(train_set, val_set, build_model):
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()
    args.world_size = torch.cuda.device_count()
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "8888")
    mp.spawn(train, nprocs=args.world_size, args=(args, train_set, val_set, build_model))
