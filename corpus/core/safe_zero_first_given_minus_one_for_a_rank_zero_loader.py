"""YOLOv5's loaders: every rank builds the training loader inside torch_distributed_zero_first
(LOCAL_RANK), and rank 0 alone builds the validation loader with `rank=-1` (or the default -1),
for which the helper issues no barrier: `-1 not in [-1, 0]` and `-1 == 0` are both false."""
import os
from contextlib import contextmanager

import torch
import torch.distributed as dist

LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))
RANK = int(os.getenv("RANK", -1))


@contextmanager
def torch_distributed_zero_first(local_rank: int):
    if local_rank not in [-1, 0]:
        dist.barrier(device_ids=[local_rank])
    yield
    if local_rank == 0:
        dist.barrier(device_ids=[0])


def create_dataloader(path, batch_size, rank=-1, workers=8):
    with torch_distributed_zero_first(rank):
        samples = [line.split() for line in open(path)]
    return torch.utils.data.DataLoader(samples, batch_size=batch_size, num_workers=workers)


def train(opt, model):
    train_loader = create_dataloader(opt.train, opt.batch_size, rank=LOCAL_RANK)
    if RANK in {-1, 0}:
        val_loader = create_dataloader(opt.val, opt.batch_size * 2, rank=-1)
        test_loader = create_dataloader(opt.test, opt.batch_size * 2)
        print(len(val_loader), len(test_loader))
    for images, targets in train_loader:
        model(images).sum().backward()
