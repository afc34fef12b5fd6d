"""A copy-paste slip: the guard tests membership of the tensor-parallel ranks but the all_reduce runs on the data-parallel group, whose members are not the ranks that pass the guard."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    tp_ranks = [0, 1]
    dp_ranks = [0, 2]
    tp_group = dist.new_group(tp_ranks)
    dp_group = dist.new_group(dp_ranks)
    layer = nn.Linear(16, 16)
    for _ in range(args.steps):
        out = layer(torch.randn(2, 16))
        if rank in tp_ranks:
            dist.all_reduce(out, group=tp_group)
        if rank in tp_ranks:
            dist.all_reduce(layer.weight.data, group=dp_group)  # expect: RC101
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
