"""The look-alikes of safe_settings_read_again_on_the_main_process.py: the main process reads
the epochs from another option (`opt.max_epochs`), or the same option after the set-up changed it
(`opt.epochs = ...` in between): its epoch loop runs another number of rounds than the others'."""
import os

import torch.distributed as dist

RANK = int(os.getenv("RANK", -1))


def train_other_option(opt, model, train_loader):
    epochs = opt.epochs
    if RANK in {-1, 0}:
        epochs = opt.max_epochs
    for epoch in range(epochs):  # expect: RC103
        for batch in train_loader:
            model(batch).backward()
        dist.barrier()


def train_after_a_change(opt, model, train_loader):
    epochs = opt.epochs
    opt.epochs = opt.epochs + opt.warmup_epochs
    if RANK in {-1, 0}:
        epochs = opt.epochs
    for epoch in range(epochs):  # expect: RC103
        for batch in train_loader:
            model(batch).backward()
        dist.barrier()
