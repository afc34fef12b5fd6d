"""The subgroup holds ranks [0, 1], but only `rank == 0` calls the all_reduce on it: rank 1 is a member that never arrives, so rank 0 waits forever."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=50)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    pair = dist.new_group([0, 1])
    head = nn.Linear(32, 8)
    for step in range(args.steps):
        out = head(torch.randn(4, 32))
        if rank == 0:
            dist.all_reduce(out, group=pair)  # expect: RC101
            print(f"step {step}: pair sum {out.sum().item():.3f}")
        dist.all_reduce(out)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
