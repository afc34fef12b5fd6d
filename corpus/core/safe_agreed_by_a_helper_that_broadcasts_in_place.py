"""Megatron's hybrid context-parallel schedule: the first tensor-parallel rank reads the batch and
counts its sub-samples, and a helper broadcasts the count in place from that rank
(`_broadcast(n)`, which skips a None it is given). Past the call the count is alike on every
rank, so the loops it bounds run as many rounds everywhere; likewise a flag a helper all-reduces
in place. Look-alike of rc103_bound_by_a_copy_a_helper_broadcast.
"""
import torch
import torch.distributed as dist


def _broadcast(item):
    if item is not None:
        dist.broadcast(item, 0)


def _reduce_max(flag):
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)


def schedule(data_iterator, forward_step):
    batch = next(data_iterator) if dist.get_rank() == 0 else None
    n = torch.tensor([len(batch) if batch is not None else 0])
    _broadcast(n)
    for i in range(int(n.item())):
        forward_step(i)
        dist.barrier()


def train_step(model, batch, optimizer):
    loss = model(batch).sum()
    bad = torch.tensor([float(torch.isnan(loss))])
    _reduce_max(bad)
    if bad.item() > 0:
        return None
    loss.backward()
    dist.all_reduce(loss)
    optimizer.step()
    return loss
