"""The look-alike of safe_early_stop_decided_on_rank0_and_adopted_by_the_others.py: each rank
decides from its own validation and the broadcast is adopted by rank 0 only, which already had
the value; the other ranks keep their own decisions and break in different epochs."""
import torch
import torch.distributed as dist


def train(model, loader, epochs, val_run):
    rank = dist.get_rank()
    stop = False
    for epoch in range(epochs):
        for x in loader:
            dist.all_reduce(x)
        stop = val_run(model, epoch) > 3
        objs = [stop if rank == 0 else None]
        dist.broadcast_object_list(objs, 0)
        if rank == 0:
            stop = objs[0]
        if stop:
            break  # expect: RC102
