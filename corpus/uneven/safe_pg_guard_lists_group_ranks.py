"""The tied-embedding gradient is all-reduced on the embedding group only by the ranks that `dist.get_process_group_ranks(embd_group)` lists, the group's own members (the group may be missing, then its size is 1 and nobody reduces): the guard selects exactly the group."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def group_size(group) -> int:
    return dist.get_world_size(group) if group is not None else 1


def allreduce_tied_embedding_grad(embedding: nn.Embedding, embd_group) -> None:
    if (
        # no embedding group: a size of 1, and nothing to reduce
        group_size(embd_group) > 1
        and dist.get_rank() in dist.get_process_group_ranks(embd_group)
    ):
        dist.all_reduce(embedding.weight.grad, group=embd_group)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    world_size = dist.get_world_size()
    embd_group = dist.new_group([0, world_size - 1])
    embedding = nn.Embedding(16, 8)
    for _ in range(args.steps):
        embedding(torch.arange(4)).sum().backward()
        allreduce_tied_embedding_grad(embedding, embd_group)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
