"""Meant to send from the group's first member, but `dist.get_global_rank(group, dist.get_rank(group))` translates each process's own group rank: every rank names itself as the source and waits for a different root."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def sync_replicas(model: nn.Module, group) -> None:
    source = dist.get_global_rank(group, dist.get_rank(group))
    for param in model.parameters():
        dist.broadcast(param.data, src=source, group=group)  # expect: RC104


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    group = dist.new_group(list(range(dist.get_world_size())))
    model = nn.Linear(8, 8)
    for _ in range(args.steps):
        sync_replicas(model, group)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
