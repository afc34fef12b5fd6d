"""Rank 0 broadcasts from one arm and the others from the complementary one, after a test of the rank against a step's owner: past that test the rank is the rank again, so the two tests stay complementary and every rank issues one broadcast."""
import argparse

import torch
import torch.distributed as dist


def share_update(update: torch.Tensor, owner: int) -> None:
    rank = dist.get_rank()
    if rank == owner:
        update.mul_(2)
    if rank == 0:
        dist.broadcast(update, src=0)
    if rank != 0:
        dist.broadcast(update, src=0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()

    dist.init_process_group("gloo", timeout=dist.default_pg_timeout)
    for step in range(args.steps):
        share_update(torch.ones(4), step % dist.get_world_size())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
