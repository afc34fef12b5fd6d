"""Only the destination rank calls dist.gather(); gather is a collective every rank must enter, so rank 0 hangs."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=256)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    model = nn.Sequential(nn.Linear(20, 1), nn.Sigmoid())
    with torch.no_grad():
        scores = model(torch.randn(args.samples, 20)).squeeze(1)

    if rank == 0:
        buckets = [torch.empty(args.samples) for _ in range(world_size)]
        dist.gather(scores, gather_list=buckets, dst=0)  # expect: RC101
        all_scores = torch.cat(buckets)
        print(f"positive rate {(all_scores > 0.5).float().mean().item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
