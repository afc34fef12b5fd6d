"""Correct at run time although labelled a mismatch: odd ranks barrier in both arms of an inner
test, even ranks call a barrier helper under `var % 2`, and `var = rank + 1` is odd on every
even rank -- so every rank issues exactly one barrier.

Origin: PARCOACH test suite, parcoach/parcoach tests/MPI/basic/SVG/inter_example_tricky1.c
("DESCRIPTION: mismatch error")
URL: https://github.com/parcoach/parcoach/blob/d600dc168457bf2e9fb6468b224d9b88e88789f7/tests/MPI/basic/SVG/inter_example_tricky1.c
MPI original: `var = rank + 1; if (rank % 2) { if (var % 2) MPI_Barrier; else MPI_Barrier; } else
{ if (var % 2) f(); }` with `f() { MPI_Barrier(WORLD); }`. On an even rank `var` is odd, so
`f()` always runs: the program is correct, and the benchmark is a trap for analyses that do not
relate `var` to the rank's parity.
Port: the same structure; kept as an `_ok` case because on real ranks it completes.
"""
import torch
import torch.distributed as dist


def f() -> None:
    dist.barrier()


def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    size = dist.get_world_size()
    var = rank + 1
    if size < 2:
        dist.destroy_process_group()
        return
    if rank % 2:
        if var % 2:
            dist.barrier()
        else:
            dist.barrier()
    else:
        if var % 2:
            f()
    print(f"Bye from proc {rank} {torch.ones(1).item()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
