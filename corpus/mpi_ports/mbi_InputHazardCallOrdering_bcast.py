"""Rank 0 broadcasts the run config only when the command-line count is odd; the other ranks
always wait in the broadcast.

Origin: MPI Bugs Initiative, generator scripts/generators/InputHazardGenerator.py in mquinson/MBI
("COLLECTIVE" part), generated code InputHazardCallOrdering_MPI_Bcast_nok.c
URL: https://github.com/mquinson/MBI/blob/1bf81e65704ce6ff01177bd2af042cdcfd30b1be/scripts/generators/InputHazardGenerator.py
MPI original: `int n = atoi(argv[1]); if (rank == 0) { if ((n % 2) == 0) { /* MBIERROR: no
collective */ } else { MPI_Bcast(...); } } else { MPI_Bcast(...); }` -- "Missing collective
function call for a path depending to input".
Port: `n` is a positional argument (default 4, an even number, so the default run takes the
missing path); rank 0 skips the broadcast on even `n` while the other ranks' `else` arm
always broadcasts.
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
            print("config unchanged, nothing to send")
        else:
            dist.broadcast(config, src=0)
    else:
        dist.broadcast(config, src=0)  # expect: RC101
    print(f"rank {rank} config {config.tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
