"""A helper reads the rank and returns a code derived from it; the caller barriers on the code.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/SVG/inter/inter_ret.c
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/SVG/inter/inter_ret.c
MPI original: `int getRank() { MPI_Comm_rank(..., &rank); if (rank > 0) z = 5; else z = 0;
return z; }`; main: `z = argc; z += getRank(); if (z > 0) MPI_Barrier(...)` plus barriers on
`argc` and on `retAny(argc)` that every rank takes.
Port: `worker_code()` returns 5 off rank 0 and 0 on it; main barriers when the code is positive
(the original adds `argc` first, which keeps `z > 0` true on every rank at run time; the port
leaves it out so the rank-dependence is real), then the uniform barriers of the original.
"""
import sys

import torch
import torch.distributed as dist


def worker_code() -> int:
    rank = dist.get_rank()
    if rank > 0:
        z = 5
    else:
        z = 0
    return z


def scaled(a: int) -> int:
    return a * 54


def main():
    dist.init_process_group("gloo")
    z = worker_code()
    if z > 0:
        dist.barrier()  # expect: RC101
    dist.barrier()
    if len(sys.argv) > 0:
        dist.barrier()
    if scaled(len(sys.argv)) > 0:
        dist.barrier()
    print(f"rank {dist.get_rank()} code {z} {torch.ones(1).item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
