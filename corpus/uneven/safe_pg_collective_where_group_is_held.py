"""Each rank keeps the hierarchical groups it belongs to and None for the others (only node leaders hold the inter-node group); the inter-node communicator is warmed up with a barrier on it only where the rank holds it, which is exactly on its members."""
import argparse

import torch
import torch.distributed as dist

_INTRA_NODE_GROUP = None
_INTER_NODE_GROUP = None


def create_hierarchical_groups(rank, ranks, node_size):
    intra = None
    for start in range(0, len(ranks), node_size):
        members = ranks[start:start + node_size]
        group = dist.new_group(members)
        if rank in members:
            intra = group
    # The node leaders (each node's first rank) talk across nodes; the other ranks hold no such group.
    leaders = ranks[::node_size]
    group = dist.new_group(leaders)
    inter = group if rank in leaders else None
    return [intra, inter]


def initialize(node_size: int) -> None:
    global _INTRA_NODE_GROUP, _INTER_NODE_GROUP
    rank = dist.get_rank()
    ranks = list(range(dist.get_world_size()))
    groups = create_hierarchical_groups(rank, ranks, node_size)
    _INTRA_NODE_GROUP = groups[0]
    _INTER_NODE_GROUP = groups[1]
    if _INTER_NODE_GROUP is not None:
        dist.barrier(group=_INTER_NODE_GROUP)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--node-size", type=int, default=1)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    initialize(args.node_size)
    dist.all_reduce(torch.ones(1))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
