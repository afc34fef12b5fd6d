"""A helper barriers when its second argument is positive; it is called once with the rank as the
first argument (harmless) and once with the rank as the second (rank-dependent).

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/SVG/inter/inter_arg.c
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/SVG/inter/inter_arg.c
MPI original: `void bar(int a, int b) { if (b > 0) MPI_Barrier(...); }`; main: MPI_Barrier,
`if (argc > 0) MPI_Barrier`, `bar(rank, 0); bar(0, rank);`. Only the second call makes the
barrier depend on the rank.
Port: `maybe_sync(tag, pending)`; the first call passes `(rank, 0)`, the second `(0, rank)`.
"""
import sys

import torch
import torch.distributed as dist


def maybe_sync(tag: int, pending: int) -> None:
    if pending > 0:
        dist.barrier()  # expect: RC101


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    dist.barrier()
    if len(sys.argv) > 0:
        dist.barrier()
    print(f"rank {rank} ok, {torch.zeros(1).item()}")
    maybe_sync(rank, 0)
    maybe_sync(0, rank)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
