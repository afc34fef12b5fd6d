"""The same loaders with a helper whose first test is `local_rank != 0`: given `-1` on rank 0
alone, it enters the barrier meant for the other local ranks, and nobody else comes."""
import os
from contextlib import contextmanager

import torch
import torch.distributed as dist

LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))
RANK = int(os.getenv("RANK", -1))


@contextmanager
def torch_distributed_zero_first(local_rank: int):
    if local_rank != 0:
        dist.barrier()
    yield
    if local_rank == 0:
        dist.barrier()


def create_dataloader(path, batch_size, rank=-1, workers=8):
    with torch_distributed_zero_first(rank):
        samples = [line.split() for line in open(path)]
    return torch.utils.data.DataLoader(samples, batch_size=batch_size, num_workers=workers)


def train(opt, model):
    train_loader = create_dataloader(opt.train, opt.batch_size, rank=LOCAL_RANK)
    if RANK in {-1, 0}:
        val_loader = create_dataloader(opt.val, opt.batch_size * 2, rank=-1)  # expect: RC101
        print(len(val_loader))
    for images, targets in train_loader:
        model(images).sum().backward()
