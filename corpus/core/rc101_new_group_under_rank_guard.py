"""Only the ranks inside the tensor-parallel block call new_group(); new_group must be called by every rank, so it hangs."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def build_tp_group(tp_size: int):
    rank = dist.get_rank()
    tp_group = None
    if rank < tp_size:
        tp_group = dist.new_group(ranks=list(range(tp_size)))  # expect: RC101
    return tp_group


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tp-size", type=int, default=2)
    parser.add_argument("--hidden", type=int, default=256)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    tp_group = build_tp_group(args.tp_size)
    dp_group = dist.new_group(ranks=list(range(dist.get_world_size())))
    layer = nn.Linear(args.hidden, args.hidden)
    out = layer(torch.randn(4, args.hidden))
    dist.all_reduce(out, group=dp_group)
    if tp_group is not None:
        print(f"rank {dist.get_rank()} in tp group, out norm {out.norm():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
