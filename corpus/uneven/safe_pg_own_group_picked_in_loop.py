"""Megatron-style group setup: every rank creates every tensor-parallel group and keeps the one it belongs to; each rank then all-reduces on its own group, so each group is complete."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def init_tensor_parallel(tp_size: int):
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    my_group = None
    for start in range(0, world_size, tp_size):
        ranks = list(range(start, start + tp_size))
        group = dist.new_group(ranks)
        if rank in ranks:
            my_group = group
    return my_group


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tp-size", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=64)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    tp_group = init_tensor_parallel(args.tp_size)
    shard = nn.Linear(args.hidden, args.hidden // args.tp_size, bias=False)
    out_proj = nn.Linear(args.hidden // args.tp_size, args.hidden, bias=False)
    for _ in range(10):
        partial = out_proj(shard(torch.randn(8, args.hidden)))
        dist.all_reduce(partial, group=tp_group)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
