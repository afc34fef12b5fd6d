"""Every rank calls dist.gather(); only its gather_list argument is a rank-dependent ternary, which is the documented usage."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=64)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    model = nn.Linear(8, 1)
    with torch.no_grad():
        scores = model(torch.randn(args.n, 8)).squeeze(1)

    buckets = [torch.empty(args.n) for _ in range(world_size)]
    dist.gather(scores, gather_list=buckets if rank == 0 else None, dst=0)
    if rank == 0:
        everything = torch.cat(buckets)
        print(f"mean score over {everything.numel()} samples: {everything.mean().item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
