"""Safe twin of ddp_yolov5_early_stopping_break_on_rank0.py: as in yolov5#8345, rank 0 broadcasts
its `stop` decision with `broadcast_object_list`, so every rank breaks out of the epoch loop
together.

Thread: https://github.com/ultralytics/yolov5/pull/4576 (fix: #8345)
"""
import argparse
import os

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))
RANK = int(os.getenv("RANK", -1))
WORLD_SIZE = int(os.getenv("WORLD_SIZE", 1))


class EarlyStopping:
    def __init__(self, patience=30):
        self.best_fitness = 0.0
        self.best_epoch = 0
        self.patience = patience or float("inf")

    def __call__(self, epoch, fitness):
        if fitness >= self.best_fitness:
            self.best_epoch = epoch
            self.best_fitness = fitness
        return (epoch - self.best_epoch) >= self.patience


def fitness(x):
    w = [0.0, 0.0, 0.1, 0.9]
    return (x[:, :4] * w).sum(1)


def train(opt, model, train_loader, val_run, compute_loss):
    device = torch.device("cuda", LOCAL_RANK if LOCAL_RANK != -1 else 0)
    if RANK != -1:
        model = DDP(model.to(device), device_ids=[LOCAL_RANK], output_device=LOCAL_RANK)
    optimizer = torch.optim.SGD(model.parameters(), lr=opt.lr, momentum=0.937, nesterov=True)
    stopper, stop = EarlyStopping(patience=opt.patience), False

    for epoch in range(opt.epochs):
        model.train()
        if RANK != -1:
            train_loader.sampler.set_epoch(epoch)
        for imgs, targets in train_loader:
            imgs = imgs.to(device, non_blocking=True).float() / 255
            pred = model(imgs)
            loss, loss_items = compute_loss(pred, targets.to(device))
            if RANK != -1:
                loss *= WORLD_SIZE
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()

        if RANK in {-1, 0}:
            results = val_run(model, epoch)
            fi = fitness(np.array(results).reshape(1, -1))
            stop = stopper(epoch=epoch, fitness=fi)
            torch.save({"epoch": epoch, "best_fitness": stopper.best_fitness}, os.path.join(opt.save_dir, "last.pt"))

        if RANK != -1:
            broadcast_list = [stop if RANK == 0 else None]
            dist.broadcast_object_list(broadcast_list, 0)
            if RANK != 0:
                stop = broadcast_list[0]
        if stop:
            break

    if RANK != -1:
        dist.destroy_process_group()


def parse_opt():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--patience", type=int, default=100)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--save-dir", dest="save_dir", default="runs/train/exp")
    return parser.parse_args()
