"""yolov5's early stop: rank 0 decides from its validation, broadcasts the decision in a
one-item list, and the other ranks adopt it (`if rank != 0: stop = objs[0]`). Rank 0 keeps the
value it sent, so every rank holds the same `stop` and all break in the same epoch."""
import torch
import torch.distributed as dist


def train(model, loader, epochs, val_run):
    rank = dist.get_rank()
    stop = False
    for epoch in range(epochs):
        for x in loader:
            dist.all_reduce(x)
        if rank == 0:
            stop = val_run(model, epoch) > 3
        objs = [stop if rank == 0 else None]
        dist.broadcast_object_list(objs, 0)
        if rank != 0:
            stop = objs[0]
        if stop:
            break
