"""Rank 0 (from the RANK environment variable) collects every rank's dataset size with
all_gather_object for its summary; the others never join and wait at the final barrier."""
import os

import torch
import torch.distributed as dist


def local_examples(rank: int) -> list:
    return [torch.randn(3) for _ in range(5 + rank)]


def main():
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo")
    examples = local_examples(rank)
    total = torch.tensor([float(len(examples))])
    dist.all_reduce(total)
    if rank == 0:
        sizes = [None] * world_size
        dist.all_gather_object(sizes, len(examples))  # expect: RC101
        print(f"{int(total.item())} examples, per rank {sizes}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
