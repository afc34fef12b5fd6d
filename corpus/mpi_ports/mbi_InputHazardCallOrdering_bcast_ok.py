"""Correct: rank 0 broadcasts on both paths of its input-dependent test, and the other ranks
broadcast in the `else` arm.

Origin: MPI Bugs Initiative, generator scripts/generators/InputHazardGenerator.py in mquinson/MBI,
generated code InputHazardCallOrdering_MPI_Bcast_ok.c
URL: https://github.com/mquinson/MBI/blob/1bf81e65704ce6ff01177bd2af042cdcfd30b1be/scripts/generators/InputHazardGenerator.py
MPI original: `if (rank == 0) { if ((n % 2) == 0) { MPI_Bcast(...); } else { MPI_Bcast(...); } }
else { MPI_Bcast(...); }` -- "Correct call ordering".
Port: the same structure; on even `n` rank 0 sends the config as it is, on odd `n` it first
bumps a version field.
"""
import argparse

import torch
import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("n", nargs="?", type=int, default=4)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    config = torch.full((4,), 42.0) if rank == 0 else torch.zeros(4)
    if rank == 0:
        if args.n % 2 == 0:
            dist.broadcast(config, src=0)
        else:
            config[0] += 1
            dist.broadcast(config, src=0)
    else:
        dist.broadcast(config, src=0)
    print(f"rank {rank} config {config.tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
