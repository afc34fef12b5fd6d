"""Every rank creates every tensor-parallel group (new_group is collective over the world) and
keeps the one it belongs to."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def build_tp_group(tp_size: int):
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    mine = None
    for start in range(0, world_size, tp_size):
        ranks = list(range(start, start + tp_size))
        group = dist.new_group(ranks=ranks)
        if rank in ranks:
            mine = group
    return mine


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tp-size", type=int, default=1)
    parser.add_argument("--hidden", type=int, default=32)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    tp_group = build_tp_group(args.tp_size)
    layer = nn.Linear(args.hidden, args.hidden)
    out = layer(torch.randn(4, args.hidden)).detach()
    dist.all_reduce(out, group=tp_group)
    dist.all_reduce(out)
    print(f"rank {dist.get_rank()} out norm {out.norm():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
