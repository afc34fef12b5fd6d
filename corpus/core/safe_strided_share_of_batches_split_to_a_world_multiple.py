"""Sampling split over the ranks as EDM's generate.py and fid.py do it: the seeds are cut with
`tensor_split` into a number of batches rounded up to a multiple of the world size, and each rank
takes every world-size-th batch from its rank on. `tensor_split(k)` always gives k pieces (some
empty), so every rank gets k / world_size batches and issues as many barriers.
"""
import torch
import torch.distributed


def get_rank():
    return torch.distributed.get_rank() if torch.distributed.is_initialized() else 0


def get_world_size():
    return torch.distributed.get_world_size() if torch.distributed.is_initialized() else 1


def generate(seeds, max_batch_size, net):
    num_batches = ((len(seeds) - 1) // (max_batch_size * get_world_size()) + 1) * get_world_size()
    all_batches = torch.as_tensor(seeds).tensor_split(num_batches)
    rank_batches = all_batches[get_rank() :: get_world_size()]
    for batch_seeds in rank_batches:
        torch.distributed.barrier()
        if len(batch_seeds) == 0:
            continue
        net(batch_seeds)
