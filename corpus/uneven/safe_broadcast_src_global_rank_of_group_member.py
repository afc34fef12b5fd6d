"""Fix for naming a subgroup's source: `dist.get_global_rank(group, 0)` translates the group's first member into its global rank, the same process on every member; so does the rank of the i-th owner while a loop walks the owners in order."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def sync_replicas(model: nn.Module, group) -> None:
    # The parameter sync of data-parallel replicas: the group's first member is the source.
    for param in model.parameters():
        dist.broadcast(param.data, src=dist.get_global_rank(group, 0), group=group)


def broadcast_owned_shards(shards_by_owner, group) -> None:
    # Each group member owns one list of shards and sends it to the others, one owner after another.
    for owner, shards in enumerate(shards_by_owner):
        source = dist.get_global_rank(group, owner)
        for shard in shards:
            dist.broadcast(shard, source, group)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    group = dist.new_group(list(range(dist.get_world_size())))
    model = nn.Linear(8, 8)
    sync_replicas(model, group)
    shards = [[torch.zeros(4)] for _ in range(dist.get_world_size())]
    for _ in range(args.steps):
        broadcast_owned_shards(shards, group)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
