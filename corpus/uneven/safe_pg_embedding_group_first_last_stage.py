"""Pipeline-parallel tied embeddings: every rank creates the group of the first and last stage, and only those two ranks (the same test as the group's members) all-reduce the embedding gradient on it."""
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn


def embedding_ranks(world_size: int):
    return [0, world_size - 1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--vocab", type=int, default=1000)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    world_size = dist.get_world_size()
    tied_ranks = embedding_ranks(world_size)
    embedding_group = dist.new_group(tied_ranks)
    stage = nn.Embedding(args.vocab, 32) if rank in tied_ranks else nn.Linear(32, 32)
    out = stage(torch.randint(0, args.vocab, (4,))) if rank in tied_ranks else stage(torch.randn(4, 32))
    out.sum().backward()
    if rank in tied_ranks:
        dist.all_reduce(stage.weight.grad, group=embedding_group)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
