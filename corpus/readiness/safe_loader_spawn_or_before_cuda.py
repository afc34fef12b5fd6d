"""Look-alikes of RC203: the loader's workers fork and finish before CUDA is initialised; a spawn context; a spawn
no workers; a worker count rankcheck cannot read; CUDA only probed. (Nothing calls these
functions: each is an entry of its own.)"""
import multiprocessing

import torch
from torch.utils.data import DataLoader


def loader_first(model, dataset):
    # the workers fork, run and exit before CUDA is touched
    counts = [len(batch) for batch in DataLoader(dataset, num_workers=4)]
    model.cuda()
    return counts


def spawn_context(model, dataset):
    model.cuda()
    ctx = multiprocessing.get_context("spawn")
    a = DataLoader(dataset, num_workers=4, multiprocessing_context=ctx)
    b = DataLoader(dataset, num_workers=4, multiprocessing_context="forkserver")
    return a, b


def no_workers(model, dataset, workers):
    model.to("cuda:0")
    a = DataLoader(dataset, num_workers=0)
    b = DataLoader(dataset)
    c = DataLoader(dataset, num_workers=workers)
    return a, b, c


def probe_only(dataset):
    if torch.cuda.is_available() and torch.cuda.device_count() > 1:
        torch.cuda.manual_seed_all(0)
    return DataLoader(dataset, num_workers=4)

