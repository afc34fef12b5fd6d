"""The members of the embedding group are tested, `dist.get_process_group_ranks(embd_group)`, but the all-reduce runs on the data-parallel group: its members outside the embedding group never join it."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def allreduce_tied_embedding_grad(embedding: nn.Embedding, embd_group, dp_group) -> None:
    if dist.get_rank() in dist.get_process_group_ranks(embd_group):
        dist.all_reduce(embedding.weight.grad, group=dp_group)  # expect: RC101


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    world_size = dist.get_world_size()
    embd_group = dist.new_group([0, world_size - 1])
    dp_group = dist.new_group(list(range(world_size)))
    embedding = nn.Embedding(16, 8)
    for _ in range(args.steps):
        embedding(torch.arange(4)).sum().backward()
        allreduce_tied_embedding_grad(embedding, embd_group, dp_group)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
