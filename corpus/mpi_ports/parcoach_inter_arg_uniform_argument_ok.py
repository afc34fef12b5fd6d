"""Correct: the helper barriers when its second argument is positive, and it is only called with
the rank in the first (unused for the test) position.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/SVG/inter/inter_arg.c (the
`bar(rank, 0)` call; the buggy `bar(0, rank)` call is ported as parcoach_inter_arg_rank_argument.py)
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/SVG/inter/inter_arg.c
MPI original: `void bar(int a, int b) { if (b > 0) MPI_Barrier(...); }` called as `bar(rank,
0)`, plus barriers every rank takes.
Port: `maybe_sync(rank, 0)` and `maybe_sync(rank, 1)`: the test sees 0 and then 1 on every rank.
"""
import sys

import torch
import torch.distributed as dist


def maybe_sync(tag: int, pending: int) -> None:
    if pending > 0:
        dist.barrier()


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    dist.barrier()
    if len(sys.argv) > 0:
        dist.barrier()
    maybe_sync(rank, 0)
    maybe_sync(rank, 1)
    print(f"rank {rank} ok {torch.zeros(1).item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
