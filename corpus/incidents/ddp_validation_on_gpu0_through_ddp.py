"""mp.spawn DDP training whose per-epoch validation runs only on `gpu == 0`, through the
DDP-wrapped model, followed by a barrier for everyone.

Thread: https://github.com/pytorch/pytorch/issues/54059 ("Using torch.distributed.barrier() makes the whole code hang")
Project: pytorch/pytorch
What hung: the forward of a DistributedDataParallel module is collective (it broadcasts buffers
and prepares the gradient reducer); rank 0 ran it alone during validation while rank 1 waited in
`dist.barrier()`, so the two met in different collectives ("I see, rank 0 and rank 1 ..."). The
hang disappeared without the barrier only because rank 1 then met rank 0's next collective.
Fix (maintainer, mrshenli): "using `output = model.module(data)` in evaluation avoids the hang" --
validate the wrapped module, not the DDP wrapper.
Expected rankcheck finding: RC101 on the rank-0-only `validate(model, ...)` call, which runs the
DDP forward.
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
            acc = validate(model, val_loader, gpu)  # expect: RC101
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
