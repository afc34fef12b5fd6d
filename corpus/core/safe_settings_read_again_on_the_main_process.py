"""yolov5-shaped training set-up: the settings are read from the options once, and the main
process reads the same options again when it resumes from a remote artifact (`weights, epochs =
opt.weights, opt.epochs` under `if RANK in {-1, 0}:`). Nothing stored into those options in
between (another option, `opt.hyp`, is), so every rank holds the same epochs and weights: the
epoch loop and the `pretrained` guard around the first-process-first barrier are alike everywhere.
(The look-alikes read another option on the main process, or read the same one after it changed.)"""
import os
from contextlib import contextmanager

import torch.distributed as dist

LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))
RANK = int(os.getenv("RANK", -1))


@contextmanager
def torch_distributed_zero_first(local_rank: int):
    if local_rank not in {-1, 0}:
        dist.barrier(device_ids=[local_rank])
    yield
    if local_rank == 0:
        dist.barrier(device_ids=[0])


def train(hyp, opt, model, train_loader):
    save_dir, epochs, batch_size, weights = opt.save_dir, opt.epochs, opt.batch_size, opt.weights
    opt.hyp = hyp.copy()
    if RANK in {-1, 0}:
        if opt.resume:
            weights, epochs, batch_size = opt.weights, opt.epochs, opt.batch_size
    pretrained = weights.endswith(".pt")
    if pretrained:
        with torch_distributed_zero_first(LOCAL_RANK):
            model.load(weights)
    for epoch in range(0, epochs):
        for imgs, targets in train_loader:
            loss = model(imgs, targets)
            loss.backward()
        dist.barrier()
